module github.com/ccbridge/ccbridge

go 1.26.8

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/fsnotify/fsnotify v1.10.1
	github.com/gofrs/flock v0.13.1
	golang.org/x/sys v0.47.0
)
