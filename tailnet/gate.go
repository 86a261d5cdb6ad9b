package tailnet

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"buddi/core/eventlog"
	"buddi/core/events"
	"buddi/core/seal"
)

// WhoIser says who is on the other end of a tailnet connection: the node's WhoIs.
type WhoIser func(ctx context.Context, remoteAddr string) (Caller, error)

// Gate decides who may use what the node serves: the owner's tailnet login, and no one else.
// A refusal is a 403 and a tailnet.refused event.
type Gate struct {
	who   WhoIser
	names func() []string
	pool  Querier
	key   seal.Key
	log   *slog.Logger

	forged seal.Refusals // forged owner logins recorded already

	mu      sync.Mutex
	refused map[string]time.Time // login/node/reason → when last recorded
	callers map[string]known     // remote address → who, for whoisFresh
}

// known is a caller WhoIs named, and when.
type known struct {
	caller Caller
	at     time.Time
}

// whoisFresh is how long WhoIs's answer for a remote address (a tailnet address and port: one
// connection of one node) is reused: the requests of a kept-alive connection ask once.
const whoisFresh = 10 * time.Second

// refusalQuiet is how long a repeated refusal of the same caller for the same reason goes
// unrecorded: a phone retrying every second records one event, not thousands.
const refusalQuiet = time.Minute

// NewGate builds the gate over the node's WhoIs, the node's names (a request's Host must be
// one of them), the database that holds the owner's login, and the key its seal is checked
// under (a login whose seal does not check is no owner).
func NewGate(who WhoIser, names func() []string, pool Querier, key seal.Key, log *slog.Logger) *Gate {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Gate{who: who, names: names, pool: pool, key: key, log: log.With("service", "tailnet"), refused: map[string]time.Time{}, callers: map[string]known{}}
}

// Verdict is what the gate found about a request.
type Verdict struct {
	Caller Caller // who called (empty when WhoIs could not say)
	Owner  string // the owner's login, or "" when none is set yet
	// Err is set when the caller could not be identified: the request is refused.
	Err error
	// OwnerErr is set when the owner's login could not be read: the request is refused.
	OwnerErr error
	// ForeignHost: the request named a host that is not the node's (a page on another site
	// that points its own name at the node): refused.
	ForeignHost bool
	// BadTicket: the request brought a sign-in ticket that is used, expired or unknown.
	BadTicket bool
}

// IsOwner reports whether the request came from the owner's login (logins compare without
// regard to case; a tagged machine is never the owner).
func (v Verdict) IsOwner() bool {
	return v.Err == nil && v.OwnerErr == nil && !v.ForeignHost && v.Owner != "" && !v.Caller.Tagged &&
		strings.EqualFold(v.Caller.Login, v.Owner)
}

// CanBeOwner reports whether the caller's login may be pinned as the owner's: a user's login,
// not a tagged machine's.
func (v Verdict) CanBeOwner() bool {
	return v.Err == nil && v.OwnerErr == nil && !v.ForeignHost && !v.Caller.Tagged && ValidLogin(v.Caller.Login) == nil
}

// HostOK reports whether r's Host (its port aside) is one of the node's names.
func (g *Gate) HostOK(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	return slices.Contains(g.names(), strings.ToLower(strings.Trim(host, "[]")))
}

// Check checks r's Host, identifies the caller and reads the owner's login.
func (g *Gate) Check(r *http.Request) Verdict {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	c, err := g.whois(ctx, r.RemoteAddr)
	if err != nil {
		return Verdict{Err: err, ForeignHost: !g.HostOK(r)}
	}
	p, err := ReadOwner(ctx, g.pool, g.key)
	if p.Refused != "" {
		g.refuseOwner(ctx, p)
	}
	return Verdict{Caller: c, Owner: p.Login, OwnerErr: err, ForeignHost: !g.HostOK(r)}
}

// refuseOwner records, once per login and process, an owner login whose seal does not check:
// a tailnet.forged event and a log line.
func (g *Gate) refuseOwner(ctx context.Context, p Pinned) {
	if !g.forged.First(p.Refused + "\x00" + p.sum) {
		return
	}
	g.log.Warn("the stored owner's tailnet login is refused: "+p.Why+"; "+ownerFix, "login", p.Refused)
	if _, err := eventlog.Append(ctx, g.pool, events.TailnetForged, "", events.TailnetForgedPayload{Row: "owner login", Login: p.Refused, Reason: p.Why, Fix: ownerFix}); err != nil {
		g.log.Warn("record a refused owner login", "err", err)
	}
}

// whois asks the node who calls from remoteAddr, reusing an answer younger than whoisFresh.
func (g *Gate) whois(ctx context.Context, remoteAddr string) (Caller, error) {
	now := time.Now()
	g.mu.Lock()
	k, ok := g.callers[remoteAddr]
	g.mu.Unlock()
	if ok && now.Sub(k.at) < whoisFresh {
		return k.caller, nil
	}
	c, err := g.who(ctx, remoteAddr)
	if err != nil {
		return Caller{}, err
	}
	g.mu.Lock()
	if len(g.callers) > 4096 {
		clear(g.callers)
	}
	g.callers[remoteAddr] = known{caller: c, at: now}
	g.mu.Unlock()
	return c, nil
}

// Refuse answers with one sentence (403; 421 for a foreign Host; 503 when the owner's login
// could not be read), and records tailnet.refused (once a minute per caller and reason).
func (g *Gate) Refuse(w http.ResponseWriter, r *http.Request, v Verdict, surface string) {
	reason := "not the owner's tailnet login"
	sentence := "this buddi answers only its owner's tailnet login"
	code := http.StatusForbidden
	switch {
	case v.ForeignHost:
		reason, sentence, code = "foreign host", "this address is not buddi's: open it by the tailnet name buddi doctor shows", http.StatusMisdirectedRequest
	case v.Err != nil:
		reason, sentence = "unidentified", "buddi could not tell who is calling over the tailnet, so the request is refused"
	case v.OwnerErr != nil:
		reason, sentence, code = "owner unreadable", "the owner's tailnet login could not be read: the database is not answering", http.StatusServiceUnavailable
	case v.BadTicket:
		reason, sentence = "used or expired ticket", "that sign-in link was used or has expired: run `buddi dashboard --tailnet` where buddi runs for a new one"
	case v.Caller.Tagged:
		reason, sentence = "tagged machine", "a tagged machine acts for no user, and buddi answers only its owner's tailnet login"
	case v.Owner == "":
		reason, sentence = "no owner login set",
			"buddi does not know its owner's tailnet login yet: run `buddi tailnet owner LOGIN` where buddi runs, or open a sign-in link from `buddi dashboard --tailnet`"
	}
	key := v.Caller.Login + "\x00" + v.Caller.Node + "\x00" + reason + "\x00" + surface
	now := time.Now()
	g.mu.Lock()
	last, seen := g.refused[key]
	record := !seen || now.Sub(last) >= refusalQuiet
	if record {
		if len(g.refused) > 4096 {
			clear(g.refused)
		}
		g.refused[key] = now
	}
	g.mu.Unlock()
	if record {
		payload := events.TailnetRefusedPayload{Login: v.Caller.Login, Node: v.Caller.Node, Reason: reason,
			Surface: surface, Path: r.URL.Path, Remote: r.RemoteAddr, Host: r.Host}
		if err := errors.Join(v.Err, v.OwnerErr); err != nil {
			payload.Error = err.Error()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if _, err := eventlog.Append(ctx, g.pool, events.TailnetRefused, "", payload); err != nil {
			g.log.Warn("record a refused tailnet request", "err", err)
		}
		cancel()
		g.log.Warn("refused a tailnet request", "login", v.Caller.Login, "node", v.Caller.Node, "reason", reason, "surface", surface)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": sentence})
}

// OwnerOnly lets the owner's login through to next and refuses everyone else (surface names
// what was asked for in the event).
func (g *Gate) OwnerOnly(surface string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := g.Check(r)
		if !v.IsOwner() {
			g.Refuse(w, r, v, surface)
			return
		}
		next.ServeHTTP(w, r)
	})
}
