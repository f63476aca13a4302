package router

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// A project's channel deleted in Discord: its threads close as deleted
// ones do, its own session stops once its turn ends, and the owners hear
// it in the control panel's channel, with what to change.
func TestDeletedProjectChannelStopsItsSessionsAndSaysSo(t *testing.T) {
	const panel = "100000000000000004"
	r, ss, _, l, _ := newRouterFrom(t, fmt.Sprintf(`
[[servers]]
name = "home"
token_env = "X"
guild_id = "100000000000000001"
owner_ids = [%q]
general_channel_id = %q
  [[servers.projects]]
  name = "api"
  channel_id = %q
  path = %q
`, owner, panel, channel, t.TempDir()))
	r.deletedCap = 300 * time.Millisecond
	threadKey := registerThread(t, r)
	ss.setState("busy")
	r.HandleChannelDeleted("home", "100000000000000099") // not a project's: nothing
	r.HandleChannelDeleted("home", channel)
	l.waitFor(t, "stop "+threadKey)
	l.waitFor(t, "stop home-api")
	if !slices.ContainsFunc(l.all(), func(op string) bool {
		return strings.HasPrefix(op, "send ⚠️ The channel of project **api** was deleted") && strings.Contains(op, "`channel_id`")
	}) {
		t.Fatalf("the owners were not told in the panel's channel: %q", l.all())
	}
	r.waitClosed(t)
}
