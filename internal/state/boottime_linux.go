package state

import "golang.org/x/sys/unix"

// bootNanos reads CLOCK_BOOTTIME (monotonic, counts suspend, the same in
// every process until the machine reboots).
func bootNanos() (int64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0, false
	}
	return ts.Nano(), true
}
