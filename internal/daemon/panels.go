package daemon

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/discord"
	"github.com/ccbridge/ccbridge/internal/panel"
	"github.com/ccbridge/ccbridge/internal/state"
)

// Panel pacing: redraw on changes, at most once per panelMinGap, and at
// least every panelEvery (its "checked in" time is this machine's
// heartbeat, which the other machines sharing the bot read back).
const (
	panelMinGap = 3 * time.Second
	panelEvery  = time.Minute
	panelTick   = time.Second
	// panelHistory is how many of the general channel's latest messages
	// are searched for the other machines' panels (Discord's maximum).
	panelHistory = 100
	// listEvery is how often the channel list is shown again.
	listEvery = time.Hour
	// leaveTimeout bounds marking the panels stopped on the way out.
	leaveTimeout = 3 * time.Second
)

// heartbeat is how often a panel is refreshed, and the others' read: three
// times within the time after which a machine counts as unreachable.
func heartbeat(unreachable time.Duration) time.Duration {
	return max(panelMinGap, min(panelEvery, unreachable/3))
}

// keepPanels keeps each server's control panel current: this machine's
// own message in the general channel, and what it shows of the others.
func (r *relay) keepPanels(ctx context.Context, p *panel.Panel) {
	sessions, _ := r.store.Sessions.Watch(ctx)
	requests, _ := r.store.Requests.Watch(ctx)
	registered, _ := r.registry.Sessions.Watch(ctx)
	scheduled, _ := r.registry.Schedules.Watch(ctx)                   // the panel names the next one
	every := heartbeat(p.Current().General.UnreachableAfter.Duration) // a restart setting
	tick := time.NewTicker(panelTick)
	defer tick.Stop()
	last := map[string]chat.Message{}
	lastAt := map[string]time.Time{}
	readAt := map[string]time.Time{}
	peers := &peerReader{botIDs: map[string]string{}, twins: map[string]bool{}, known: map[string][]string{}, saved: map[string]string{},
		loaded: map[string]bool{}, overlaps: map[string]string{}}
	listedAt := map[string]time.Time{} // when each server's channel list was last shown
	var cfg *config.Config             // the config drawn
	dirty := true                      // a change waits to be drawn
	for {
		if cur := p.Current(); cur != cfg {
			// Started, or reloaded: what this machine owns, and its
			// channel list, change with the config.
			cfg, dirty = cur, true
			clear(listedAt)
			ownChannels(p.Fleet, cfg)
		}
		for _, srv := range cfg.Servers {
			if srv.GeneralChannelID != "" && p.Fleet != nil && time.Since(readAt[srv.Name]) >= every {
				readAt[srv.Name] = time.Now()
				r.readPeers(ctx, p.Fleet, peers, srv.Name, srv.GeneralChannelID)
				dirty = true // a peer may have gone quiet; sameBody decides
			}
		}
		if dirty {
			dirty = false
			for _, srv := range cfg.Servers {
				if srv.GeneralChannelID == "" {
					continue
				}
				if time.Since(lastAt[srv.Name]) < panelMinGap {
					dirty = true // draw it on the next tick
					continue
				}
				m := p.Render(ctx, srv.Name)
				if prev, ok := last[srv.Name]; ok && sameBody(prev, m) && time.Since(lastAt[srv.Name]) < every {
					continue
				}
				if r.showPanel(ctx, srv.Name, srv.GeneralChannelID, m) {
					last[srv.Name], lastAt[srv.Name] = m, time.Now()
				}
				// The list changes only with the config; it is shown again
				// now and then in case someone deleted it.
				if p.Fleet != nil && time.Since(listedAt[srv.Name]) >= listEvery &&
					r.showMessage(ctx, srv.Name, srv.GeneralChannelID, listKey(srv.Name), "channel list", p.ChannelList(srv.Name)) {
					listedAt[srv.Name] = time.Now()
				}
			}
		}
		select {
		case <-ctx.Done():
			r.leavePanels(p, lastAt)
			return
		case <-sessions:
			dirty = true
		case <-requests:
			dirty = true
		case <-registered:
			dirty = true
		case <-scheduled:
			dirty = true
		case <-tick.C:
			for _, at := range lastAt {
				dirty = dirty || time.Since(at) >= every
			}
		}
	}
}

// ownChannels tells the fleet which channels this machine maps.
func ownChannels(f *panel.Fleet, cfg *config.Config) {
	if f == nil {
		return
	}
	for _, srv := range cfg.Servers {
		var own []string
		for _, proj := range srv.Projects {
			own = append(own, proj.ChannelID)
		}
		f.SetOwn(srv.Name, own)
	}
}

// leavePanels marks this machine's panels stopped as the daemon stops, so
// that the other machines show it down at once rather than after
// unreachable_after.
func (r *relay) leavePanels(p *panel.Panel, drawn map[string]time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), leaveTimeout)
	defer cancel()
	for _, srv := range p.Current().Servers {
		if _, ok := drawn[srv.Name]; !ok || srv.GeneralChannelID == "" {
			continue
		}
		rec, err := r.registry.Panels.Get(srv.Name)
		poster, ok := r.posters[srv.Name]
		if err != nil || !ok || rec.ChannelID != srv.GeneralChannelID || rec.MessageID == "" {
			continue
		}
		if err := poster.Edit(ctx, rec.ChannelID, rec.MessageID, p.Stopped(srv.Name)); err != nil {
			r.log.Warn("could not mark the control panel stopped", "server", srv.Name, "err", err)
		}
	}
}

// peerReader remembers, per server, the bot's user id and whether a
// daemon using this machine's name was reported.
type peerReader struct {
	botIDs map[string]string
	twins  map[string]bool
	// known are the other machines' panel messages seen before: read one
	// by one when the channel's talk has pushed them out of its latest
	// messages. They are kept in the registry, for after a restart.
	known  map[string][]string
	saved  map[string]string // registry key → message id stored there
	loaded map[string]bool   // servers whose known panels were loaded
	// overlaps is the last overlap warned about, by server.
	overlaps map[string]string
}

// peerKey is the registry key of another machine's panel message.
func peerKey(server, machine string) string { return "peer@" + server + "@" + machine }

// peerListKey is the registry key of another machine's channel list.
func peerListKey(server, machine string) string { return peerKey(server, machine) + "/channels" }

// listKey is the registry key of this machine's channel list.
func listKey(server string) string { return "channels@" + server }

// loadKnown reads the other machines' panel messages remembered from
// before this daemon started.
func (r *relay) loadKnown(pr *peerReader, server, channel string) {
	pr.loaded[server] = true
	all, err := r.registry.Panels.List()
	if err != nil {
		return
	}
	for k, v := range all {
		if strings.HasPrefix(k, peerKey(server, "")) && v.ChannelID == channel && v.MessageID != "" {
			pr.known[server] = append(pr.known[server], v.MessageID)
			pr.saved[k] = v.MessageID
		}
	}
}

// saveKnown remembers each machine's latest panel message, and forgets
// those of machines whose message is gone.
func (r *relay) saveKnown(ctx context.Context, pr *peerReader, server, channel string, peers []panel.Peer, gone map[string]bool) {
	for k, id := range pr.saved {
		if gone[id] && strings.HasPrefix(k, peerKey(server, "")) {
			delete(pr.saved, k)
			_ = r.registry.Panels.Delete(ctx, k)
		}
	}
	save := func(k, id string) {
		if id == "" || pr.saved[k] == id {
			return
		}
		if _, err := r.registry.Panels.Update(ctx, k, func(pm *state.PanelMessage) error {
			pm.ChannelID, pm.MessageID = channel, id
			return nil
		}); err == nil {
			pr.saved[k] = id
		}
	}
	for _, p := range peers {
		save(peerKey(server, p.Machine), p.MessageID)
		save(peerListKey(server, p.Machine), p.ListID)
	}
}

// readPeers reads the other machines' panel messages from the general
// channel: messages of this bot whose first line is a panel header, other
// than this machine's own panel.
func (r *relay) readPeers(ctx context.Context, fleet *panel.Fleet, pr *peerReader, server, channel string) {
	botIDs := pr.botIDs
	poster, ok := r.readers[server]
	if !ok {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, noticeTimeout)
	defer cancel()
	if botIDs[server] == "" {
		id, err := poster.Me(rctx)
		if err != nil {
			r.log.Warn("could not read the other machines' panels", "server", server, "err", err)
			return
		}
		botIDs[server] = id
	}
	msgs, err := poster.Recent(rctx, channel, panelHistory)
	if err != nil {
		r.log.Warn("could not read the other machines' panels", "server", server, "err", err)
		return
	}
	if !pr.loaded[server] {
		r.loadKnown(pr, server, channel)
	}
	listed, gone := map[string]bool{}, map[string]bool{}
	for _, m := range msgs {
		listed[m.ID] = true
	}
	for _, id := range pr.known[server] {
		if listed[id] {
			continue
		}
		listed[id] = true
		m, err := poster.Message(rctx, channel, id)
		if discord.IsUnknownMessage(err) {
			gone[id] = true // deleted: forget it
			continue
		}
		if err != nil {
			r.log.Warn("could not read another machine's panel", "server", server, "message", id, "err", err)
			return
		}
		msgs = append(msgs, m)
	}
	own, _ := r.registry.Panels.Get(server)
	var peers []panel.Peer
	pr.known[server] = nil
	type list struct {
		id       string
		channels []string
		complete bool
	}
	lists := map[string]list{} // machine → its latest channel list
	for _, m := range msgs {
		if m.AuthorID != botIDs[server] || m.ID == own.MessageID {
			continue
		}
		if machine, channels, complete, ok := panel.ParseChannelList(m.Content); ok {
			if machine != fleet.Machine {
				pr.known[server] = append(pr.known[server], m.ID)
				if cur, ok := lists[machine]; !ok || idBefore(cur.id, m.ID) {
					lists[machine] = list{m.ID, channels, complete}
				}
			}
			continue
		}
		if machine, stopped, at, ok := panel.ParseHeader(m.Content); ok {
			if machine == fleet.Machine && time.Since(at) < fleet.UnreachableAfter && !pr.twins[server] {
				pr.twins[server] = true
				r.log.Warn("another daemon sharing the bot calls itself this machine's name; give each machine its own [general] machine", "server", server, "machine", machine, "message", m.ID)
			}
			if machine != fleet.Machine {
				pr.known[server] = append(pr.known[server], m.ID)
			}
			peers = append(peers, panel.Peer{Machine: machine, MessageID: m.ID, CheckedIn: at, Stopped: stopped,
				Channels: panel.ParseChannels(m.Content), Complete: panel.PanelComplete(m.Content)})
		}
	}
	for i, p := range peers {
		if l, ok := lists[p.Machine]; ok {
			peers[i].ListID, peers[i].Complete = l.id, p.Complete || l.complete
			for _, ch := range l.channels {
				if !slices.Contains(p.Channels, ch) {
					peers[i].Channels = append(peers[i].Channels, ch)
				}
			}
		}
	}
	changed := fleet.SetPeers(server, peers)
	r.saveKnown(ctx, pr, server, channel, fleet.Peers(server), gone)
	if changed {
		r.log.Info("machines sharing the bot", "server", server, "panel", fleet.Line(server))
	}
	overlaps := fleet.Overlaps(server)
	if text := fmt.Sprint(overlaps); text != pr.overlaps[server] {
		pr.overlaps[server] = text
		for _, machine := range slices.Sorted(maps.Keys(overlaps)) {
			r.log.Warn("another machine sharing the bot maps a channel this machine maps: both answer there; map each channel on one machine only",
				"server", server, "machine", machine, "channels", overlaps[machine])
		}
	}
}

// idBefore orders Discord snowflakes (decimal strings): older first.
func idBefore(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// sameBody compares two renders, ignoring the first line (its time).
func sameBody(a, b chat.Message) bool {
	_, ab, _ := strings.Cut(a.Content, "\n")
	_, bb, _ := strings.Cut(b.Content, "\n")
	return ab == bb && slices.EqualFunc(a.Rows, b.Rows, func(x, y chat.Row) bool {
		return slices.Equal(x.Buttons, y.Buttons) && (x.Select == nil) == (y.Select == nil)
	})
}

// showPanel edits the server's panel message, or posts it when there is
// none (first start, or someone deleted it), remembering its id. Each
// machine edits only its own panel message.
func (r *relay) showPanel(ctx context.Context, server, channel string, m chat.Message) bool {
	return r.showMessage(ctx, server, channel, server, "control panel", m)
}

// showMessage edits the message of this machine that the registry keeps
// under key, or posts it when there is none.
func (r *relay) showMessage(ctx context.Context, server, channel, key, what string, m chat.Message) bool {
	poster, ok := r.posters[server]
	if !ok {
		return false
	}
	pctx, cancel := context.WithTimeout(ctx, noticeTimeout)
	defer cancel()
	rec, err := r.registry.Panels.Get(key)
	if err == nil && rec.ChannelID == channel && rec.MessageID != "" {
		err := poster.Edit(pctx, channel, rec.MessageID, m)
		if err == nil {
			r.bind(ctx, server, channel, rec.MessageID, m)
			return true
		}
		if !errors.Is(err, chat.ErrUnknownMessage) {
			r.log.Error("could not update the "+what, "server", server, "err", err)
			return false
		}
	}
	id, err := poster.Post(pctx, channel, m)
	if err != nil {
		r.log.Error("could not post the "+what, "server", server, "err", err)
		return false
	}
	// Posted is posted: a daemon stopping now must still remember and bind
	// it, or the next start posts a second one beside a copy whose buttons
	// nobody can check.
	ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), noticeTimeout)
	defer cancel()
	if _, err := r.registry.Panels.Update(ctx, key, func(pm *state.PanelMessage) error {
		pm.ChannelID, pm.MessageID = channel, id
		return nil
	}); err != nil {
		r.log.Error("could not remember the "+what, "err", err)
	}
	r.bind(ctx, server, channel, id, m)
	r.log.Info(what+" posted", "server", server, "message", id)
	return true
}

// bind records what a message with controls the daemon drew shows: its
// buttons act only from it, as drawn (internal/guard).
func (r *relay) bind(ctx context.Context, server, channel, id string, m chat.Message) {
	if r.guard == nil || len(m.Rows) == 0 {
		return
	}
	if err := r.guard.Bind(ctx, server, channel, id, m, nil); err != nil {
		r.log.Error("could not record the panel's binding", "server", server, "err", err)
	}
}
