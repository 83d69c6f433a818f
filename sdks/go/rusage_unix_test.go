//go:build unix

package flagops

import "syscall"

// cpuTime is the process's user and system CPU time in nanoseconds: on a shared machine it moves far
// less with other processes' load than wall time does.
func cpuTime() int64 {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return u.Utime.Nano() + u.Stime.Nano()
}
