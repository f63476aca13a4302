package codexhook

import (
	"reflect"
	"testing"
)

const rollout = "testdata/rollout.jsonl"

func TestFinalReplyIsEveryMessageAfterTheLastToolCallOfTheTurn(t *testing.T) {
	for _, tc := range []struct {
		turn, last, want string
		found            bool
	}{
		{"t1", "Done.", "probe reply one\n\nDone.", true},
		// Another turn ending the same way is not this one.
		{"t2", "Done.", "Second turn, first message.\n\nDone.", true},
		// Not written yet.
		{"t1", "Something else.", "", false},
		{"t3", "Done.", "", false},
		// No last message to match: the turn's messages as they stand.
		{"t1", "", "probe reply one\n\nDone.", true},
	} {
		got, found, err := FinalReply(rollout, tc.turn, tc.last)
		if err != nil || found != tc.found || got != tc.want {
			t.Errorf("FinalReply(%s, %q) = %q, %v, %v; want %q, %v", tc.turn, tc.last, got, found, err, tc.want, tc.found)
		}
	}
	if _, _, err := FinalReply("testdata/none.jsonl", "t1", "x"); err == nil {
		t.Error("no error for a missing rollout")
	}
}

func TestTextBeforeIsWhatTheModelWroteBeforeTheCall(t *testing.T) {
	msgs, found, err := TextBefore(rollout, "call_fake_1_0")
	if err != nil || !found || !reflect.DeepEqual(msgs, []Message{{ID: "msg_fake_1_0", Text: "Running echo."}}) {
		t.Errorf("first call: %+v, %v, %v", msgs, found, err)
	}
	// Right after another call: nothing before it.
	if msgs, found, err := TextBefore(rollout, "call_fake_2_0"); err != nil || !found || len(msgs) != 0 {
		t.Errorf("second call: %+v, %v, %v", msgs, found, err)
	}
	if _, found, _ := TextBefore(rollout, "call_later"); found {
		t.Error("a call not in the rollout found")
	}
}

func TestLastUsageIsTheLastTokenCount(t *testing.T) {
	u, ok, err := LastUsage(rollout)
	if err != nil || !ok || u != (Usage{Model: "gpt-fake", Tokens: 51680, Window: 258400}) {
		t.Errorf("LastUsage = %+v, %v, %v", u, ok, err)
	}
}
