//go:build !unix

package flagops

func cpuTime() int64 { return 0 }
