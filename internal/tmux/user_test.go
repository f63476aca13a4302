package tmux

import "testing"

func TestUserServerNeedsAnAbsoluteSocketPath(t *testing.T) {
	for _, bad := range []string{"", "relative/sock", "/tmp/a\nb"} {
		if _, err := UserServer(nil, bad); err == nil {
			t.Errorf("socket %q was accepted", bad)
		}
	}
	s, err := UserServer(nil, "/tmp/tmux-1000/default")
	if err != nil || len(s.SocketArgs()) != 2 || s.SocketArgs()[1] != "/tmp/tmux-1000/default" {
		t.Fatalf("UserServer = %v, %v", s, err)
	}
}
