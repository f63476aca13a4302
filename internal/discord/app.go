package discord

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
)

// What `ccbridge setup` and `ccbridge doctor` read about the bot: who it is,
// its application (owner, intents), its guilds and channels, and what it may
// do in each channel.

// Permission bits ccbridge needs in a project channel (Discord's values).
const (
	PermAddReactions          int64 = 1 << 6
	PermViewChannel           int64 = 1 << 10
	PermSendMessages          int64 = 1 << 11
	PermEmbedLinks            int64 = 1 << 14
	PermAttachFiles           int64 = 1 << 15
	PermReadMessageHistory    int64 = 1 << 16
	PermManageThreads         int64 = 1 << 34
	PermCreatePublicThreads   int64 = 1 << 35
	PermCreatePrivateThreads  int64 = 1 << 36
	PermSendMessagesInThreads int64 = 1 << 38

	permAdministrator int64 = 1 << 3
)

// CommandPermissions is the default_member_permissions of ccbridge's
// slash commands: none, so Discord shows them to administrators only.
// Only owners may use them, and a default cannot name users; an owner who
// is not an administrator is let in by one, in Server Settings →
// Integrations → the bot → Commands (a user or role override).
const CommandPermissions int64 = 0

// Permission is one permission ccbridge needs, with the name the Discord
// client shows for it.
type Permission struct {
	Bit  int64
	Name string
}

// Needed lists the bot permissions the README asks for, in its order; the
// invite URL requests exactly these.
var Needed = []Permission{
	{PermViewChannel, "View Channels"},
	{PermSendMessages, "Send Messages"},
	{PermSendMessagesInThreads, "Send Messages in Threads"},
	{PermCreatePublicThreads, "Create Public Threads"},
	{PermManageThreads, "Manage Threads"},
	{PermReadMessageHistory, "Read Message History"},
	{PermAttachFiles, "Attach Files"},
	{PermAddReactions, "Add Reactions"},
	{PermEmbedLinks, "Embed Links"},
}

// NeededBits is the bitfield of Needed.
func NeededBits() int64 {
	var b int64
	for _, p := range Needed {
		b |= p.Bit
	}
	return b
}

// PanelNeeded is what the control panel's channel needs: the panel is one
// message per bot, edited in place, with buttons.
var PanelNeeded = []Permission{Needed[0], Needed[1], Needed[5]}

// CreatePrivateThreads is what /open needs to start its threads private.
var CreatePrivateThreads = Permission{PermCreatePrivateThreads, "Create Private Threads"}

// OpenNeeded is what /open needs, beyond PanelNeeded, in the control-panel
// channel of a server with open_roots: it starts a private thread there,
// adds the owners, posts, reacts and attaches files in it, and archives it
// on /close.
var OpenNeeded = []Permission{CreatePrivateThreads, Needed[2], Needed[4], Needed[7], Needed[6]}

// InviteBits is what the invite asks for: Needed, and Create Private
// Threads for /open (only checked where /open runs).
func InviteBits() int64 { return NeededBits() | PermCreatePrivateThreads }

// Missing names the Needed permissions that perms lacks, in Needed's order.
func Missing(perms int64) []string { return MissingOf(perms, Needed) }

// MissingOf names the permissions of need that perms lacks, in need's order.
func MissingOf(perms int64, need []Permission) []string {
	var out []string
	for _, p := range need {
		if perms&p.Bit == 0 {
			out = append(out, p.Name)
		}
	}
	return out
}

// InviteURL is the OAuth2 URL that adds the bot to a server with the
// bot and applications.commands scopes and exactly the InviteBits
// permissions.
func InviteURL(appID string) string {
	q := url.Values{}
	q.Set("client_id", appID)
	q.Set("scope", "bot applications.commands")
	q.Set("permissions", strconv.FormatInt(InviteBits(), 10))
	return "https://discord.com/oauth2/authorize?" + q.Encode()
}

// Application flags that mean the Message Content intent is enabled:
// GATEWAY_MESSAGE_CONTENT (verified bots) and _LIMITED (bots in fewer than
// 100 servers, the toggle in the portal).
const (
	FlagGatewayMessageContent        = 1 << 18
	FlagGatewayMessageContentLimited = 1 << 19
)

// App is the bot's application as setup and doctor need it.
type App struct {
	ID      string
	Name    string
	OwnerID string // the owner, or the owner of the team that owns it
	Flags   int
}

// MessageContent reports whether the Message Content intent is enabled.
func (a App) MessageContent() bool {
	return a.Flags&(FlagGatewayMessageContent|FlagGatewayMessageContentLimited) != 0
}

// Guild is a server the bot is in.
type Guild struct {
	ID, Name string
}

// TextChannel is a guild text channel.
type TextChannel struct {
	ID, Name string
	// Perms is what the bot may do in it (computed from the guild's roles,
	// the bot's roles and the channel's overwrites); set by ChannelPerms.
	Perms int64
	// Public: every member of the server may view it (private.go).
	Public bool
}

// Client reads the bot's account for setup and doctor. Each call is one
// bounded REST request.
type Client struct {
	dg      *discordgo.Session
	apiBase string
}

// NewClient returns a client for one bot token.
func NewClient(apiBase, token string) (*Client, error) {
	dg, err := restSession(apiBase, token)
	if err != nil {
		return nil, err
	}
	return &Client{dg: dg, apiBase: apiBase}, nil
}

// Me returns the bot user's id and name.
func (c *Client) Me(ctx context.Context) (id, name string, err error) {
	start := time.Now()
	u, err := c.dg.User("@me", discordgo.WithContext(ctx))
	if err != nil {
		return "", "", c.fail("who am i", start, err)
	}
	return u.ID, u.Username, nil
}

// Application returns the bot's application.
func (c *Client) Application(ctx context.Context) (App, error) {
	start := time.Now()
	body, err := c.dg.Request("GET", discordgo.EndpointOAuth2Application("@me"), nil, discordgo.WithContext(ctx))
	if err != nil {
		return App{}, c.fail("read application", start, err)
	}
	var a discordgo.Application
	if err := json.Unmarshal(body, &a); err != nil {
		return App{}, c.fail("read application", start, err)
	}
	out := App{ID: a.ID, Name: a.Name, Flags: a.Flags}
	switch {
	case a.Team != nil && a.Team.OwnerID != "":
		out.OwnerID = a.Team.OwnerID
	case a.Owner != nil:
		out.OwnerID = a.Owner.ID
	}
	return out, nil
}

// Guilds returns the servers the bot is in.
func (c *Client) Guilds(ctx context.Context) ([]Guild, error) {
	start := time.Now()
	gs, err := c.dg.UserGuilds(200, "", "", false, discordgo.WithContext(ctx))
	if err != nil {
		return nil, c.fail("list servers", start, err)
	}
	out := make([]Guild, 0, len(gs))
	for _, g := range gs {
		out = append(out, Guild{ID: g.ID, Name: g.Name})
	}
	return out, nil
}

// TextChannels returns a guild's text channels in their displayed order.
func (c *Client) TextChannels(ctx context.Context, guildID string) ([]TextChannel, error) {
	start := time.Now()
	chs, err := c.dg.GuildChannels(guildID, discordgo.WithContext(ctx))
	if err != nil {
		return nil, c.fail("list channels", start, err)
	}
	roles, err := c.dg.GuildRoles(guildID, discordgo.WithContext(ctx))
	if err != nil {
		return nil, c.fail("read roles", start, err)
	}
	slices.SortStableFunc(chs, func(a, b *discordgo.Channel) int { return a.Position - b.Position })
	var out []TextChannel
	for _, ch := range chs {
		if ch.Type == discordgo.ChannelTypeGuildText {
			out = append(out, TextChannel{ID: ch.ID, Name: ch.Name, Public: everyoneCanView(guildID, roles, ch.PermissionOverwrites)})
		}
	}
	return out, nil
}

// CreateTextChannel creates a text channel only the bot and the owners can
// see, and returns it.
func (c *Client) CreateTextChannel(ctx context.Context, guildID, name, botID string, ownerIDs []string) (TextChannel, error) {
	start := time.Now()
	ch, err := c.dg.GuildChannelCreateComplex(guildID, discordgo.GuildChannelCreateData{Name: name, Type: discordgo.ChannelTypeGuildText,
		PermissionOverwrites: privateOverwrites(guildID, botID, ownerIDs)}, discordgo.WithContext(ctx))
	if err != nil {
		return TextChannel{}, c.fail("create channel #"+name, start, err)
	}
	return TextChannel{ID: ch.ID, Name: ch.Name}, nil
}

// ChannelPerms returns every channel of the guild (text channels and
// others, by id) with the permissions the bot has there, computed as
// Discord does: @everyone, then the bot's roles, then the channel's
// overwrites for @everyone, its roles and itself; owner and Administrator
// have everything.
func (c *Client) ChannelPerms(ctx context.Context, guildID string) (map[string]TextChannel, error) {
	start := time.Now()
	botID, _, err := c.Me(ctx)
	if err != nil {
		return nil, err
	}
	g, err := c.dg.Guild(guildID, discordgo.WithContext(ctx))
	if err != nil {
		return nil, c.fail("read server "+guildID, start, err)
	}
	roles, err := c.dg.GuildRoles(guildID, discordgo.WithContext(ctx))
	if err != nil {
		return nil, c.fail("read roles", start, err)
	}
	member, err := c.dg.GuildMember(guildID, botID, discordgo.WithContext(ctx))
	if err != nil {
		return nil, c.fail("read the bot's roles", start, err)
	}
	chs, err := c.dg.GuildChannels(guildID, discordgo.WithContext(ctx))
	if err != nil {
		return nil, c.fail("list channels", start, err)
	}
	out := map[string]TextChannel{}
	for _, ch := range chs {
		out[ch.ID] = TextChannel{ID: ch.ID, Name: ch.Name, Perms: computePerms(g.ID, g.OwnerID, botID, roles, member.Roles, ch.PermissionOverwrites),
			Public: everyoneCanView(g.ID, roles, ch.PermissionOverwrites)}
	}
	return out, nil
}

const permAll int64 = 1<<53 - 1

func computePerms(guildID, ownerID, userID string, roles []*discordgo.Role, memberRoles []string, ows []*discordgo.PermissionOverwrite) int64 {
	if userID == ownerID {
		return permAll
	}
	var p int64
	for _, r := range roles {
		if r.ID == guildID || slices.Contains(memberRoles, r.ID) {
			p |= r.Permissions
		}
	}
	if p&permAdministrator != 0 {
		return permAll
	}
	for _, o := range ows {
		if o.ID == guildID {
			p = p&^o.Deny | o.Allow
		}
	}
	var deny, allow int64
	for _, o := range ows {
		if o.Type == discordgo.PermissionOverwriteTypeRole && o.ID != guildID && slices.Contains(memberRoles, o.ID) {
			deny |= o.Deny
			allow |= o.Allow
		}
	}
	p = p&^deny | allow
	for _, o := range ows {
		if o.Type == discordgo.PermissionOverwriteTypeMember && o.ID == userID {
			p = p&^o.Deny | o.Allow
		}
	}
	return p
}

// ChannelName turns a project name into a valid Discord channel name
// (lowercase, no spaces).
func ChannelName(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.Join(strings.Fields(s), "-")
	return strings.TrimLeft(s, "#")
}
