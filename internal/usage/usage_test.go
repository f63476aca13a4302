package usage

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
)

type statuses map[string]state.Status

func (s statuses) Get(id string) (state.Status, error) {
	if st, ok := s[id]; ok {
		return st, nil
	}
	return state.Status{}, errors.New("none")
}

// /usage lists the project's sessions alone, the channel's first, and
// says which have no figures yet.
func TestTextListsTheProjectsSessions(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	sessions := map[string]state.Session{
		"home-api":        {Server: "home", Project: "api", ClaudeSessionID: "c1"},
		"home-api-thread": {Server: "home", Project: "api", ThreadID: "77"},
		"home-web":        {Server: "home", Project: "web", ClaudeSessionID: "c2"},
		"work-api":        {Server: "work", Project: "api", ClaudeSessionID: "c3"},
	}
	got := Text("api", "home", "api", sessions, statuses{"c1": {At: now.Add(-time.Minute), LinesAdded: 3}}, now)
	lines := strings.Split(got, "\n")
	if lines[0] != "**Usage — api**" || !strings.HasPrefix(lines[1], "• channel session: ") || !strings.Contains(lines[1], "+3 −0 lines · updated 1m0s ago") ||
		lines[2] != "• thread <#77>: no figures yet" || !strings.HasPrefix(lines[3], "-# Plan limits") || len(lines) != 4 {
		t.Errorf("usage:\n%s", got)
	}
	if got := Text("api", "home", "none", sessions, statuses{}, now); !strings.HasSuffix(got, "No session of this project has run yet.") {
		t.Errorf("empty: %q", got)
	}
}

type resumes map[string]state.Resume

func (r resumes) List() (map[string]state.Resume, error) { return r, nil }
func (r resumes) Update(_ context.Context, key string, fn func(*state.Resume) error) (state.Resume, error) {
	x := r[key]
	err := fn(&x)
	r[key] = x
	return x, err
}

// A click arms only the offer of its own channel; one gone is told so.
func TestArmOnlyTheChannelsOffer(t *testing.T) {
	rs := resumes{"home-api": {Server: "home", ChannelID: "10"}}
	if _, _, err := Arm(context.Background(), rs, "home", "11", "home-api", "u"); !errors.Is(err, ErrNoOffer) {
		t.Fatalf("another channel's click: %v", err)
	}
	key, res, err := Arm(context.Background(), rs, "home", "10", "home-api", "u")
	if err != nil || key != "home-api" || !res.Armed || res.ArmedBy != "u" || !rs["home-api"].Armed {
		t.Fatalf("armed %q %+v %v", key, res, err)
	}
}

// An offer is due once armed and its reset has come; a prompt since the
// stopped turn means the session went on, and nothing is sent.
func TestDueAndWentOn(t *testing.T) {
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	res := state.Resume{At: at, Armed: true, PromptID: "p1"}
	if Due(res, at.Add(-time.Second)) || !Due(res, at) || Due(state.Resume{At: at}, at.Add(time.Hour)) {
		t.Error("due before the reset, or unarmed")
	}
	if WentOn(res, "p1") || WentOn(res, "") || !WentOn(res, "p2") || WentOn(state.Resume{}, "p2") {
		t.Error("went on misread")
	}
}
