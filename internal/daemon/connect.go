package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/discord"
	"github.com/ccbridge/ccbridge/internal/gateway"
)

// Reconnect pacing for a bot that could not connect: the wait doubles
// from connectRetryFirst up to connectRetryCap, each with ±25% jitter so that machines
// sharing a bot do not retry together. A refused token or a disallowed
// intent waits connectRetryCap from the start: only the person can fix it. A
// bot down to its last session starts waits until Discord resets them.
// Variables for tests.
var (
	connectRetryFirst = 30 * time.Second
	connectRetryCap   = 10 * time.Minute
)

// connector connects the bot of every server and keeps the daemon up
// while one cannot connect: that bot is reported and retried alone, the
// others serve. A crash loop instead would IDENTIFY the healthy bots at
// each restart and spend their daily session starts.
type connector struct {
	log     *slog.Logger
	apiBase string
	open    func(ctx context.Context, srv config.Server) (*gateway.Bot, error)
	// report says why a server's bot is not connected ("" once it is).
	report func(server, problem string)

	mu     sync.Mutex
	bots   []*gateway.Bot
	closed bool
	stop   context.CancelFunc // ends the retries
	wg     sync.WaitGroup
}

// connectAll tries each server's bot once, in order. When none connects
// and every failure needs a person, it returns the first, said as setup
// and doctor say it. Otherwise each bot that failed is retried in the
// background until ctx ends.
func (c *connector) connectAll(ctx context.Context, servers []config.Server) error {
	type failure struct {
		srv    config.Server
		err    error
		waited time.Duration
	}
	var failed []failure
	ctx, c.stop = context.WithCancel(ctx)
	for _, srv := range servers {
		start := time.Now()
		b, err := c.open(ctx, srv)
		if err != nil {
			failed = append(failed, failure{srv, err, time.Since(start)})
			continue
		}
		c.add(b)
	}
	if len(failed) == len(servers) && len(failed) > 0 {
		// Exiting only helps when a person must act: for a passing failure
		// (no network at login) systemd's restarts would soon hit its
		// start limit and leave ccbridge failed for good.
		if !slices.ContainsFunc(failed, func(f failure) bool { return !needsPerson(f.err) }) {
			return connectError(failed[0].srv.Name, c.apiBase, failed[0].waited, failed[0].err)
		}
		c.log.Warn("no bot could connect; ccbridge keeps running and retries them", "bots", len(failed))
	}
	for _, f := range failed {
		c.wg.Go(func() { c.retry(ctx, f.srv, f.err, f.waited) })
	}
	return nil
}

// retry reconnects one bot with backoff until it connects or ctx ends.
// err is why the last try failed, after waited.
func (c *connector) retry(ctx context.Context, srv config.Server, err error, waited time.Duration) {
	for attempt := 0; ; attempt++ {
		wait := retryWait(attempt, err)
		shown := connectError(srv.Name, c.apiBase, waited, err)
		c.log.Error("a bot could not connect; it is retried (any others keep running)", "server", srv.Name, "err", shown,
			"retry_in", wait.Round(time.Second), "attempt", attempt+1, "fix", fixHint(err))
		c.report(srv.Name, fmt.Sprintf("%v (retrying in %s)", shown, wait.Round(time.Second)))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		start := time.Now()
		b, oerr := c.open(ctx, srv)
		if oerr == nil {
			if !c.add(b) {
				_ = b.Close()
				return
			}
			c.report(srv.Name, "")
			c.log.Info("bot connected", "server", srv.Name, "attempts", attempt+2)
			return
		}
		if ctx.Err() != nil {
			return
		}
		err, waited = oerr, time.Since(start)
	}
}

// retryWait is the pause before retry attempt (0 for the first).
func retryWait(attempt int, err error) time.Duration {
	var sl *gateway.StartLimitError
	d := connectRetryFirst << min(attempt, 20)
	switch {
	case errors.As(err, &sl):
		return sl.ResetAfter + jitter(connectRetryFirst)
	case needsPerson(err):
		d = connectRetryCap
	}
	return jitter(min(d, connectRetryCap))
}

// jitter spreads d by ±25%.
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return d
	}
	return d*3/4 + rand.N(d/2+1)
}

// needsPerson reports whether only a person can fix a connect failure: a
// refused token, or the Message Content intent off.
func needsPerson(err error) bool {
	return discord.RefusedToken(err) || discord.DisallowedIntents(err)
}

// fixHint says what a person can do about a connect failure.
func fixHint(err error) string {
	var sl *gateway.StartLimitError
	switch {
	case discord.RefusedToken(err):
		return "copy a fresh token (Developer Portal → Bot → Reset Token), run `ccbridge setup`, then restart ccbridge"
	case discord.DisallowedIntents(err):
		return "turn on the Message Content Intent (Developer Portal → Bot → Privileged Gateway Intents); ccbridge retries by itself"
	case errors.As(err, &sl):
		return "nothing: ccbridge connects once Discord resets the count; look for a machine or loop restarting this bot"
	}
	return "check the network and `ccbridge doctor`; ccbridge retries by itself"
}

// add keeps a connected bot; false once the connector is closed.
func (c *connector) add(b *gateway.Bot) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.bots = append(c.bots, b)
	return true
}

// connected returns how many bots are connected.
func (c *connector) connected() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.bots)
}

// close stops the retries and disconnects the bots.
func (c *connector) close() error {
	if c.stop != nil {
		c.stop()
	}
	c.wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	var errs []error
	for _, b := range c.bots {
		errs = append(errs, b.Close())
	}
	return errors.Join(errs...)
}
