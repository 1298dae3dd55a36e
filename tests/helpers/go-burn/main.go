// SPDX-License-Identifier: LGPL-2.1-or-later
//
// A Go program with a known call path for test-sampler-go.sh: main.main -> goburnOuter ->
// goburnMiddle -> goburnLeaf, burning CPU for the seconds given. Go keeps frame pointers on
// x86-64 and writes no .eh_frame: tprofd walks it by frame pointers, to runtime.goexit.
//
// go-burn SECONDS -sched keeps the scheduler busy instead: goroutines handing values to each other,
// for test-sampler-go.sh.
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

// goPinger hands a value back and forth with another over unbuffered channels: each hand-over
// parks one goroutine and readies the other, and the scheduler reads the clock (runtime.nanotime1,
// into the vDSO) on the g0 stack as it does.
func goPinger(in <-chan uint64, out chan<- uint64) {
	for v := range in {
		for i := 0; i < 200; i++ {
			v = v*6364136223846793005 + 1442695040888963407
		}
		out <- v
	}
}

//go:noinline
func goSched(end time.Time) {
	for k := 0; k < 8; k++ {
		a, b := make(chan uint64), make(chan uint64)
		go goPinger(a, b)
		go goPinger(b, a)
		a <- uint64(k)
	}
	time.Sleep(time.Until(end))
}

func main() {
	secs, err := strconv.Atoi(os.Args[1])
	if err != nil {
		os.Exit(64)
	}
	end := time.Now().Add(time.Duration(secs) * time.Second)
	if len(os.Args) > 2 && os.Args[2] == "-sched" {
		goSched(end)
		return
	}
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
