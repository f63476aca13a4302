//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
)

// Discord creates the reply but its answer is lost behind a 502, three
// times: the retries carry the same nonce, so the reply is posted once, and
// the next reply follows it.
func TestOutboxCreateAnswered502PostsOnce(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.model.Script("SCN_ONCE", fakemodel.Text("created once"))
	b.model.Script("SCN_NEXT", fakemodel.Text("the next reply"))
	b.srv.FailAfterCreate("POST", "/channels/"+p.channel+"/messages", 502, 3)
	b.say(p, "SCN_ONCE")
	b.waitReply(p, "created once")
	b.say(p, "SCN_NEXT")
	b.waitReply(p, "the next reply")
	// Replies of a channel are posted in order, so a second copy of the
	// first would be in the channel before the second reply.
	if replies := b.bodies(p.channel); strings.Join(replies, "|") != "created once|the next reply" {
		t.Fatalf("replies = %q", replies)
	}
}
