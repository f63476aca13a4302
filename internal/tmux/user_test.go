package tmux

import "testing"

func TestSocketFromEnv(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/tmux-1000/default,1234,0": "/tmp/tmux-1000/default",
		"/tmp/a,b/sock,99,3":            "/tmp/a,b/sock",
		"":                              "",
		"garbage":                       "",
	} {
		if got := SocketFromEnv(in); got != want {
			t.Errorf("SocketFromEnv(%q) = %q, want %q", in, got, want)
		}
	}
	if _, err := UserServer(nil, "relative/sock"); err == nil {
		t.Error("a relative socket path was accepted")
	}
}
