// SPDX-License-Identifier: LGPL-2.1-or-later
//
// A Go program with a known call path for test-sampler-go.sh: main.main -> goburnOuter ->
// goburnMiddle -> goburnLeaf, burning CPU for the seconds given. Go keeps frame pointers on
// x86-64 and writes no .eh_frame: tprofd walks it by frame pointers, to runtime.goexit.
//
// go-burn SECONDS FILE paces itself as a node agent does, for test-tprofd-story.sh: every 100 ms
// 0.5 ms of CPU in goHousekeeping, and while FILE exists 6.5 ms more in the call path, under
// goPaced (main.main -> goPaced -> spinFor -> goburnOuter -> ...): from 0.5% of a CPU to 7%.
package main

import (
	"os"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

var sink uint64

//go:noinline
func goburnLeaf(n uint64) uint64 {
	var buf [64]uint64 // a frame of its own, so the walk does not skip its caller
	for i := 0; i < 4000; i++ {
		n = n*6364136223846793005 + 1442695040888963407
		buf[i%64] ^= n
	}
	return n ^ buf[n%64]
}

//go:noinline
func goburnMiddle(n uint64) uint64 { return goburnLeaf(n) + 1 }

//go:noinline
func goburnOuter(n uint64) uint64 { return goburnMiddle(n) + 1 }

// cpuNow is the CPU time the process has run (CLOCK_PROCESS_CPUTIME_ID, exact to the
// nanosecond: the kernel adds the running thread's time since its last tick).
func cpuNow() time.Duration {
	var ts syscall.Timespec
	_, _, _ = syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 2, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

// spinFor calls f until it has run for d of CPU time: on a busy host a wall-clock budget would
// shrink with the CPU the scheduler leaves us.
//
//go:noinline
func spinFor(d time.Duration, f func()) {
	end := cpuNow() + d
	for cpuNow() < end {
		f()
	}
}

//go:noinline
func goHousekeeping() {
	for i := 0; i < 100; i++ {
		sink = sink*6364136223846793005 + 1442695040888963407
	}
}

//go:noinline
func goPaced(end time.Time, file string) {
	for time.Now().Before(end) {
		start := time.Now()
		spinFor(500*time.Microsecond, goHousekeeping)
		if _, err := os.Stat(file); err == nil {
			spinFor(6500*time.Microsecond, func() { sink += goburnOuter(sink) })
		}
		time.Sleep(100*time.Millisecond - time.Since(start))
	}
}

func main() {
	secs, err := strconv.Atoi(os.Args[1])
	if err != nil {
		os.Exit(64)
	}
	end := time.Now().Add(time.Duration(secs) * time.Second)
	if len(os.Args) > 2 {
		goPaced(end, os.Args[2])
		return
	}
	for time.Now().Before(end) {
		for i := 0; i < 100; i++ {
			sink += goburnOuter(sink)
		}
	}
}
