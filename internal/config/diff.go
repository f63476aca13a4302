package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// Change is one difference between the config a daemon runs with and an
// edited one, said for a person.
type Change struct {
	What string
	// Restart: it takes effect only when the daemon is restarted (the
	// daemon captured it when it started: a connection, a tmux server,
	// this machine's name among the fleet).
	Restart bool
	// NextSession: it reaches the sessions started from now on; those
	// running keep what they started with.
	NextSession bool
}

// restartKeys are the keys the daemon reads only at start.
var restartKeys = map[string]bool{
	"general.machine":           true, // the fleet's name for this daemon
	"general.unreachable_after": true, // the panel heartbeat
	"discord.api_base":          true, // every bot connection and poster
	"telegram.api_base":         true,
	"web.listen":                true, // the web view's listener and the links' root
	"web.public_url":            true,
	"web.tls_cert":              true,
	"web.tls_key":               true,
	"tmux.socket":               true, // the tmux server sessions run in
	"token":                     true, // a server's bot connection
	"token_env":                 true,
	"token_file":                true,
	"guild_id":                  true, // which guild a bot serves
	"platform":                  true, // which client a bot connects with
	"chat_id":                   true, // which chat a Telegram bot serves
}

// Diff lists what changed from old to cur, in file order. Secrets are
// never shown: a token is "changed", [claude].env names only its keys.
func Diff(old, cur *Config) []Change {
	var out []Change
	add := func(restart bool, format string, args ...any) {
		out = append(out, Change{What: fmt.Sprintf(format, args...), Restart: restart})
	}
	next := func(format string, args ...any) {
		out = append(out, Change{What: fmt.Sprintf(format, args...), NextSession: true})
	}
	for _, k := range changedKeys(old.General, cur.General) {
		add(restartKeys["general."+k], "[general] %s", k)
	}
	for _, k := range changedKeys(old.Discord, cur.Discord) {
		add(restartKeys["discord."+k], "[discord] %s", k)
	}
	for _, k := range changedKeys(old.Telegram, cur.Telegram) {
		add(restartKeys["telegram."+k], "[telegram] %s", k)
	}
	for _, k := range changedKeys(old.Tmux, cur.Tmux) {
		add(restartKeys["tmux."+k], "[tmux] %s", k)
	}
	for _, k := range changedKeys(old.Claude, cur.Claude) {
		if k == "env" {
			next("[claude] env (%s)", envChange(old.Claude.Env, cur.Claude.Env))
			continue
		}
		next("[claude] %s", k)
	}
	for _, k := range changedKeys(old.Policy, cur.Policy) {
		next("[policy] %s", k)
	}
	for _, k := range changedKeys(old.Voice, cur.Voice) {
		add(false, "[voice] %s", k)
	}
	for _, k := range changedKeys(old.Web, cur.Web) {
		add(restartKeys["web."+k], "[web] %s", k)
	}
	olds := map[string]Server{}
	for _, s := range old.Servers {
		olds[s.Name] = s
	}
	curs := map[string]bool{}
	for _, s := range cur.Servers {
		curs[s.Name] = true
		was, ok := olds[s.Name]
		if !ok {
			add(true, "server %s added", s.Name)
			continue
		}
		out = append(out, diffServer(was, s)...)
	}
	for _, s := range old.Servers {
		if !curs[s.Name] {
			add(true, "server %s removed", s.Name)
		}
	}
	return out
}

func diffServer(old, cur Server) []Change {
	var out []Change
	for _, k := range changedKeys(old, cur) {
		if k == "general_channel_id" && cur.Telegram() {
			continue // derived from chat_id, which says the change
		}
		switch k {
		case "projects":
		case "owner_ids":
			out = append(out, Change{What: fmt.Sprintf("server %s owner_ids (%s)", cur.Name, listChange(old.OwnerIDs, cur.OwnerIDs))})
		default:
			out = append(out, Change{What: fmt.Sprintf("server %s %s", cur.Name, k), Restart: restartKeys[k], NextSession: k == "tmux_session"})
		}
	}
	olds := map[string]Project{}
	for _, p := range old.Projects {
		olds[p.Name] = p
	}
	curs := map[string]bool{}
	for _, p := range cur.Projects {
		curs[p.Name] = true
		was, ok := olds[p.Name]
		if !ok {
			out = append(out, Change{What: fmt.Sprintf("project %s/%s added", cur.Name, p.Name)})
			continue
		}
		keys := changedKeys(was, p)
		if cur.Telegram() {
			// Derived from topic_id (or chat_id), which says the change.
			keys = slices.DeleteFunc(keys, func(k string) bool { return k == "channel_id" })
		}
		if len(keys) > 0 {
			out = append(out, Change{What: fmt.Sprintf("project %s/%s %s", cur.Name, p.Name, strings.Join(keys, ", ")), NextSession: true})
		}
	}
	for _, p := range old.Projects {
		if !curs[p.Name] {
			out = append(out, Change{What: fmt.Sprintf("project %s/%s removed", cur.Name, p.Name)})
		}
	}
	return out
}

// changedKeys returns the TOML keys of two values of one struct type whose
// values differ, in declaration order; an embedded struct's keys count as
// the outer one's.
func changedKeys(a, b any) []string {
	var out []string
	var walk func(x, y reflect.Value)
	walk = func(x, y reflect.Value) {
		t := x.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				walk(x.Field(i), y.Field(i))
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if name == "" || name == "-" || !f.IsExported() {
				continue
			}
			if !reflect.DeepEqual(x.Field(i).Interface(), y.Field(i).Interface()) {
				out = append(out, name)
			}
		}
	}
	walk(reflect.ValueOf(a), reflect.ValueOf(b))
	return out
}

// envChange names the [claude].env keys added, changed and removed, never
// their values (an API key may be one).
func envChange(old, cur map[string]string) string {
	var added, changed, removed []string
	for _, k := range slices.Sorted(maps.Keys(cur)) {
		v, ok := old[k]
		switch {
		case !ok:
			added = append(added, k)
		case v != cur[k]:
			changed = append(changed, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(old)) {
		if _, ok := cur[k]; !ok {
			removed = append(removed, k)
		}
	}
	var parts []string
	for _, p := range []struct {
		verb string
		keys []string
	}{{"added", added}, {"changed", changed}, {"removed", removed}} {
		if len(p.keys) > 0 {
			parts = append(parts, p.verb+" "+strings.Join(p.keys, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// listChange counts what was added to and removed from a list of ids.
func listChange(old, cur []string) string {
	var parts []string
	if n := countMissing(cur, old); n > 0 {
		parts = append(parts, fmt.Sprintf("%d added", n))
	}
	if n := countMissing(old, cur); n > 0 {
		parts = append(parts, fmt.Sprintf("%d removed", n))
	}
	if len(parts) == 0 {
		return "reordered"
	}
	return strings.Join(parts, ", ")
}

// countMissing counts the entries of a that b lacks.
func countMissing(a, b []string) int {
	n := 0
	for _, x := range a {
		if !slices.Contains(b, x) {
			n++
		}
	}
	return n
}

// ReloadSummary says, in a few lines, what a reload applied and what waits
// for a restart; "" when nothing changed.
func ReloadSummary(changes []Change) string {
	var live, restart []string
	next := false
	for _, c := range changes {
		if c.Restart {
			restart = append(restart, c.What)
		} else {
			live = append(live, c.What)
			next = next || c.NextSession
		}
	}
	var b strings.Builder
	if len(live) > 0 {
		b.WriteString("Applied: " + strings.Join(live, "; ") + ".")
	}
	if next {
		b.WriteString("\nRunning sessions keep the settings they started with; the next session started gets the new ones (stop one with the control panel's Stop to restart it with them).")
	}
	if len(restart) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString("Needs a restart of ccbridge to take effect: " + strings.Join(restart, "; ") + ".")
	}
	return b.String()
}
