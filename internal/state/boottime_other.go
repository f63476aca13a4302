//go:build !linux

package state

import "golang.org/x/sys/unix"

// bootNanos reads CLOCK_MONOTONIC: on macOS it counts sleep too and is the
// same in every process until the machine reboots, as Linux's
// CLOCK_BOOTTIME is (which macOS lacks).
func bootNanos() (int64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0, false
	}
	return ts.Nano(), true
}
