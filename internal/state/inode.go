package state

import (
	"io/fs"
	"syscall"
)

// inode distinguishes a replaced file from a touched one in the poll fallback.
func inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}
