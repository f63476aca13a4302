package daemon

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/discord"
	"github.com/ccbridge/ccbridge/internal/panel"
	"github.com/ccbridge/ccbridge/internal/state"
)

// Panel pacing: redraw on changes, at most once per panelMinGap, and at
// least every panelEvery (its relative "updated" time moves on).
const (
	panelMinGap = 3 * time.Second
	panelEvery  = time.Minute
)

// keepPanels keeps each server's control panel current.
func (r *relay) keepPanels(ctx context.Context, p *panel.Panel) {
	sessions, _ := r.store.Sessions.Watch(ctx)
	requests, _ := r.store.Requests.Watch(ctx)
	registered, _ := r.registry.Sessions.Watch(ctx)
	tick := time.NewTicker(panelMinGap)
	defer tick.Stop()
	last := map[string]chat.Message{}
	lastAt := map[string]time.Time{}
	dirty := true // a change waits to be drawn
	for {
		if dirty {
			dirty = false
			for _, srv := range p.Config.Servers {
				if srv.GeneralChannelID == "" {
					continue
				}
				if time.Since(lastAt[srv.Name]) < panelMinGap {
					dirty = true // draw it on the next tick
					continue
				}
				m := p.Render(ctx, srv.Name)
				if prev, ok := last[srv.Name]; ok && sameBody(prev, m) && time.Since(lastAt[srv.Name]) < panelEvery {
					continue
				}
				if r.showPanel(ctx, srv.Name, srv.GeneralChannelID, m) {
					last[srv.Name], lastAt[srv.Name] = m, time.Now()
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-sessions:
			dirty = true
		case <-requests:
			dirty = true
		case <-registered:
			dirty = true
		case <-tick.C:
			for _, at := range lastAt {
				dirty = dirty || time.Since(at) >= panelEvery
			}
		}
	}
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
// none (first start, or someone deleted it), remembering its id.
func (r *relay) showPanel(ctx context.Context, server, channel string, m chat.Message) bool {
	poster, ok := r.posters[server]
	if !ok {
		return false
	}
	pctx, cancel := context.WithTimeout(ctx, noticeTimeout)
	defer cancel()
	rec, err := r.registry.Panels.Get(server)
	if err == nil && rec.ChannelID == channel && rec.MessageID != "" {
		err := poster.Edit(pctx, channel, rec.MessageID, m)
		if err == nil {
			return true
		}
		if !discord.IsUnknownMessage(err) {
			r.log.Error("could not update the control panel", "server", server, "err", err)
			return false
		}
	}
	id, err := poster.Post(pctx, channel, m)
	if err != nil {
		r.log.Error("could not post the control panel", "server", server, "err", err)
		return false
	}
	if _, err := r.registry.Panels.Update(ctx, server, func(pm *state.PanelMessage) error {
		pm.ChannelID, pm.MessageID = channel, id
		return nil
	}); err != nil {
		r.log.Error("could not remember the control panel", "err", err)
	}
	r.log.Info("control panel posted", "server", server, "message", id)
	return true
}
