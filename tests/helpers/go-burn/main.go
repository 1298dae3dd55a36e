// SPDX-License-Identifier: LGPL-2.1-or-later
//
// A Go program with a known call path for test-sampler-go.sh: main.main -> goburnOuter ->
// goburnMiddle -> goburnLeaf, burning CPU for the seconds given. Go keeps frame pointers on
// x86-64 and writes no .eh_frame: tprofd walks it by frame pointers, to runtime.goexit.
package main

import (
	"os"
	"strconv"
	"time"
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

func main() {
	secs, err := strconv.Atoi(os.Args[1])
	if err != nil {
		os.Exit(64)
	}
	end := time.Now().Add(time.Duration(secs) * time.Second)
	for time.Now().Before(end) {
		for i := 0; i < 100; i++ {
			sink += goburnOuter(sink)
		}
	}
}
