package email

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	netmail "net/mail"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/emersion/go-message"
	"github.com/emersion/go-message/mail"
	"github.com/emersion/go-message/textproto"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"buddi/core/artifact"
	"buddi/core/seal"
	"buddi/plugins"
)

// DraftMediaType is the media type of a draft's artifact: the JSON of a [Draft].
const DraftMediaType = "application/vnd.buddi.email-draft+json"

// draftSource is the Source of every draft artifact: only what email.draft wrote is sent.
const draftSource = Name + ".draft"

// SendTimeout bounds one email.send or email.reply, from the dial to the server's answer.
const SendTimeout = 3 * time.Minute

// maxReferences bounds the References header of a reply: the thread's first Message-ID and
// the newest ones.
const maxReferences = 20

// Deps is what the email tools need from the composition root.
type Deps struct {
	// Pool is the database holding the email schema. Without it every tool refuses.
	Pool *pgxpool.Pool
	// Artifacts is core's artifact store: a draft is one of its versions. Without it every
	// tool refuses.
	Artifacts *artifact.Store
	// Secrets is the vault holding the accounts' app passwords (core/vault.Vault).
	Secrets Secrets
	// Sender sends the messages; nil means a zero [Sender] (the system's TLS roots).
	Sender *Sender
	// Key checks the accounts' seals: an account whose seal does not check is refused, so
	// with the zero key every account is.
	Key seal.Key
}

// Plugin is the email plugin's tools over their dependencies, which [BindTools] may set after
// the manifest is built.
type Plugin struct {
	deps atomic.Pointer[Deps]
}

// New returns the plugin over deps.
func New(deps Deps) *Plugin {
	p := &Plugin{}
	p.deps.Store(&deps)
	return p
}

// BindTools gives the email tools of manifests their dependencies (buddi serve calls it with
// its pool, artifact store and vault); it reports whether it found them.
func BindTools(manifests []plugins.Manifest, deps Deps) bool {
	for _, m := range manifests {
		for _, t := range m.Tools {
			if et, ok := t.(interface{ plugin() *Plugin }); ok {
				et.plugin().deps.Store(&deps)
				return true
			}
		}
	}
	return false
}

// Tools are the plugin's tools: email.draft, email.send and email.reply.
func (p *Plugin) Tools() []plugins.Tool {
	return []plugins.Tool{&draftTool{p: p}, &sendTool{p: p}, &sendTool{p: p, reply: true}}
}

// Views draw the tools' results as records.
func (p *Plugin) Views() []plugins.ViewDescriptor {
	return []plugins.ViewDescriptor{
		{Tool: Name + ".draft", Renderer: "keyvalue"},
		{Tool: Name + ".send", Renderer: "keyvalue"},
		{Tool: Name + ".reply", Renderer: "keyvalue"},
	}
}

// errUnbound refuses every call in a process that gave the tools no database or store.
var errUnbound = errors.New("the email tools have no database or artifact store in this process (buddi serve has them), so nothing was drafted or sent")

// ready returns the dependencies, or errUnbound.
func (p *Plugin) ready() (*Deps, error) {
	d := p.deps.Load()
	if d == nil || d.Pool == nil || d.Artifacts == nil {
		return nil, errUnbound
	}
	return d, nil
}

// refusedError is a refusal for the model: its text is the whole result.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return e.msg }

func refusef(format string, args ...any) error {
	return &refusedError{msg: fmt.Sprintf(format, args...)}
}

// toolResult turns a refusal into an error result for the model; other errors stay errors.
func toolResult(err error) (plugins.Result, error) {
	if r, ok := errors.AsType[*refusedError](err); ok {
		return plugins.Result{Text: r.msg, IsError: true}, nil
	}
	return plugins.Result{}, err
}

// Draft is an email draft as email.draft saves it: the JSON of one artifact version.
// Recipients are RFC 5322 addresses ("Bob <bob@example.org>" or "bob@example.org").
type Draft struct {
	Account string   `json:"account"` // the account's name
	From    string   `json:"from"`    // always the account's address
	To      []string `json:"to"`      // the To addresses (a reply's may be empty: its Reply-To or From)
	Cc      []string `json:"cc"`      // the Cc addresses
	Bcc     []string `json:"bcc"`     // the Bcc addresses, named in no header
	Subject string   `json:"subject"` // the subject ("Re: " once for a reply)
	Body    string   `json:"body"`    // the plain-text body
	// InReplyToMessage is the email.messages id of the message answered; 0 for a new
	// message.
	InReplyToMessage int64 `json:"in_reply_to_message,omitempty"`
}

// parseAddresses parses a list of addresses, each "Name <addr>" or "addr", saying in one
// sentence what is wrong with the first bad one.
func parseAddresses(kind string, list []string) ([]*mail.Address, error) {
	out := make([]*mail.Address, 0, len(list))
	for _, s := range list {
		if strings.ContainsAny(s, "\r\n") {
			return nil, refusef("The %s address %q has a line break in it; give each address on one line.", kind, s)
		}
		a, err := netmail.ParseAddress(strings.TrimSpace(s))
		if err != nil {
			return nil, refusef("The %s address %q is not an email address (%v); give one such as bob@example.org or Bob <bob@example.org>.", kind, s, err)
		}
		if err := CheckAddress(a.Address); err != nil {
			return nil, refusef("The %s address: %s.", kind, err)
		}
		if err := checkHeaderValue("the name of "+a.Address, a.Name); err != nil {
			return nil, refusef("The %s address: %s.", kind, err)
		}
		out = append(out, a)
	}
	return out, nil
}

// display is an address as a person reads it: "Name <addr>" or "addr", not encoded.
func display(a *mail.Address) string {
	if a.Name == "" {
		return a.Address
	}
	return a.Name + " <" + a.Address + ">"
}

func displayAll(list []*mail.Address) []string {
	out := make([]string, 0, len(list))
	for _, a := range list {
		out = append(out, display(a))
	}
	return out
}

// storedAll is a list of addresses as a draft keeps them: RFC 5322, names quoted or
// encoded as needed, so they parse back as they were.
func storedAll(list []*mail.Address) []string {
	out := make([]string, 0, len(list))
	for _, a := range list {
		out = append(out, a.String())
	}
	return out
}

// plural says n things.
func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, one)
}

// account reads the account named name, as a refusal when there is none or its seal does
// not check.
func account(ctx context.Context, deps *Deps, name string) (Account, error) {
	st := Store{Pool: deps.Pool, Key: deps.Key}
	a, err := st.Account(ctx, name)
	if err == nil && a.Refused != "" {
		return a, refusef("The email account %q is refused and cannot be used, because %s; the owner can %s.", name, a.Refused, Fix(name))
	}
	if errors.Is(err, ErrNoAccount) {
		names := []string{}
		if all, err := st.Accounts(ctx); err == nil {
			for _, x := range all {
				names = append(names, x.Name)
			}
		}
		if len(names) == 0 {
			return a, refusef("There is no email account named %q, and none is set up: the owner adds one with buddi email add.", name)
		}
		return a, refusef("There is no email account named %q; the accounts are %s.", name, strings.Join(names, ", "))
	}
	return a, err
}

// original is a received message a reply answers, read from email.messages and its raw
// header in email.bodies: all of it text a stranger wrote.
type original struct {
	Message
	replyTo    []*mail.Address // its Reply-To, when it has a usable one
	from       []*mail.Address // its From
	references []string        // its References (or its In-Reply-To, without them)
}

// readOriginal reads message id of account acct, as a refusal when it is not one.
func readOriginal(ctx context.Context, pool *pgxpool.Pool, acct Account, id int64) (original, error) {
	var o original
	var v, uid int64
	var raw []byte
	var accountID int64
	err := pool.QueryRow(ctx, `SELECT m.id, m.account_id, m.mailbox_id, m.uidvalidity, m.uid, m.message_id,
			m.from_addr, m.to_addrs, m.subject, coalesce(m.sent_at, 'epoch'), m.size, coalesce(b.raw, ''::bytea)
		FROM email.messages m LEFT JOIN email.bodies b ON b.message = m.id WHERE m.id = $1`, id).Scan(
		&o.ID, &accountID, &o.MailboxID, &v, &uid, &o.MessageID, &o.From, &o.To, &o.Subject, &o.Date, &o.Size, &raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return o, refusef("There is no received message %d to answer; the message's id is the one its triage named.", id)
	}
	if err != nil {
		return o, fmt.Errorf("email: read message %d: %w", id, err)
	}
	o.AccountID, o.UIDValidity, o.UID = accountID, uint32(v), uint32(uid)
	if accountID != acct.ID {
		return o, refusef("Message %d was received by another account than %s; answer it from the account it came to.", id, acct.Name)
	}
	if !validMsgID(o.MessageID) {
		return o, refusef("Message %d has no usable Message-ID, so a reply cannot be threaded to it; draft a new message with email.send instead (leave in_reply_to_message out).", id)
	}
	h, err := textproto.ReadHeader(bufio.NewReader(bytes.NewReader(raw)))
	if err == nil {
		mh := mail.Header{Header: message.Header{Header: h}}
		o.replyTo = usable(mh.AddressList("Reply-To"))
		o.from = usable(mh.AddressList("From"))
		refs, _ := mh.MsgIDList("References")
		if len(refs) == 0 {
			if irt, _ := mh.MsgIDList("In-Reply-To"); len(irt) == 1 {
				refs = irt
			}
		}
		for _, r := range refs {
			if validMsgID(r) && r != o.MessageID {
				o.references = append(o.references, r)
			}
		}
	}
	if len(o.from) == 0 {
		o.from = usable(netmail.ParseAddressList(o.From))
	}
	return o, nil
}

// usable keeps the addresses that can be written in a header and sent to; none when the
// list did not parse.
func usable(list []*mail.Address, err error) []*mail.Address {
	if err != nil {
		return nil
	}
	var out []*mail.Address
	for _, a := range list {
		if CheckAddress(a.Address) == nil {
			out = append(out, &mail.Address{Name: HeaderLine(a.Name), Address: a.Address})
		}
	}
	return out
}

// threadReferences is the References of a reply to o: its own, then its Message-ID, at most
// maxReferences (the first kept, then the newest).
func threadReferences(o original) []string {
	refs := append(append([]string{}, o.references...), o.MessageID)
	if len(refs) > maxReferences {
		refs = append([]string{refs[0]}, refs[len(refs)-maxReferences+1:]...)
	}
	return refs
}

// replySubject is subject prefixed "Re: " once.
func replySubject(subject string) string {
	subject = strings.Join(strings.Fields(subject), " ")
	if len(subject) >= 3 && strings.EqualFold(subject[:3], "re:") {
		return subject
	}
	return "Re: " + subject
}

// --- the plan: a draft version resolved into the message that would ship ---

// plan is a draft version resolved into the message to send and where from.
type plan struct {
	tool     string
	account  Account
	version  artifact.Artifact // the exact draft version
	draft    Draft
	out      Outgoing
	original *original // the message answered, for email.reply
	toNote   string    // how To was chosen when the draft named none
}

// sendArgs are email.send's and email.reply's arguments.
type sendArgs struct {
	Draft   string `json:"draft"`
	Version int    `json:"version"`
}

// visible reports whether the call's agent may read a: it made it, or it was made in the
// call's conversation (the artifacts plugin's rule).
func visible(a artifact.Artifact, call plugins.Call) bool {
	return (call.Agent != "" && a.Agent == call.Agent) || (call.ConversationID != "" && a.ConversationID == call.ConversationID)
}

// readDraft reads version n of the draft artifact id (any of its versions' ids), if the
// call's agent may read it and email.draft wrote it.
func readDraft(ctx context.Context, store *artifact.Store, call plugins.Call, id string, n int) (artifact.Artifact, Draft, error) {
	var d Draft
	none := refusef("There is no email draft %s you may read; email.draft returns the draft's artifact id and version.", id)
	all, err := store.Versions(ctx, id)
	if errors.Is(err, artifact.ErrNotFound) {
		return artifact.Artifact{}, d, none
	}
	if err != nil {
		return artifact.Artifact{}, d, err
	}
	var v artifact.Artifact
	for _, x := range all {
		if x.Version == n {
			v = x
		}
	}
	if !visible(all[0], call) || all[0].Source != draftSource {
		return artifact.Artifact{}, d, none
	}
	if v.ID == "" || !visible(v, call) {
		return artifact.Artifact{}, d, refusef("Draft %s has no version %d; its latest is version %d.", id, n, all[len(all)-1].Version)
	}
	if v.Source != draftSource || v.MediaType != DraftMediaType {
		return artifact.Artifact{}, d, refusef("Version %d of %s was not written by email.draft, so it is not sent; write the draft again with email.draft.", n, id)
	}
	_, data, err := store.Open(ctx, v.ID)
	if err != nil {
		return artifact.Artifact{}, d, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return artifact.Artifact{}, d, refusef("Version %d of draft %s is not a readable draft (%v); write it again with email.draft.", n, id, err)
	}
	return v, d, nil
}

// resolve turns the call's draft version into the message that would ship. It reads and
// writes nothing but reads: Describe and Execute both use it.
func (t *sendTool) resolve(ctx context.Context, deps *Deps, call plugins.Call) (plan, error) {
	var a sendArgs
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return plan{}, fmt.Errorf("%s: %w", t.name(), err)
	}
	v, d, err := readDraft(ctx, deps.Artifacts, call, a.Draft, a.Version)
	if err != nil {
		return plan{}, err
	}
	p := plan{tool: t.name(), version: v, draft: d}
	switch {
	case t.reply && d.InReplyToMessage == 0:
		return plan{}, refusef("Draft %s version %d answers no message, so it is sent with email.send, not email.reply.", v.Lineage, v.Version)
	case !t.reply && d.InReplyToMessage != 0:
		return plan{}, refusef("Draft %s version %d answers message %d, so it is sent with email.reply, which threads it.", v.Lineage, v.Version, d.InReplyToMessage)
	}
	if p.account, err = account(ctx, deps, d.Account); err != nil {
		return plan{}, err
	}
	if !strings.EqualFold(d.From, p.account.Address) {
		return plan{}, refusef("The draft is from %s, which is not the account %s's address (%s); email sends only from the account's own address, so draft it again.", d.From, p.account.Name, p.account.Address)
	}
	o := Outgoing{Subject: d.Subject, Body: d.Body}
	if o.To, err = parseAddresses("To", d.To); err != nil {
		return plan{}, err
	}
	if o.Cc, err = parseAddresses("Cc", d.Cc); err != nil {
		return plan{}, err
	}
	if o.Bcc, err = parseAddresses("Bcc", d.Bcc); err != nil {
		return plan{}, err
	}
	if t.reply {
		orig, err := readOriginal(ctx, deps.Pool, p.account, d.InReplyToMessage)
		if err != nil {
			return plan{}, err
		}
		p.original = &orig
		o.InReplyTo, o.References = orig.MessageID, threadReferences(orig)
		if o.Subject == "" {
			o.Subject = HeaderLine(orig.Subject)
		}
		o.Subject = replySubject(o.Subject)
		if len(o.To) == 0 {
			o.To, p.toNote = replyTo(orig)
			if len(o.To) == 0 {
				return plan{}, refusef("Message %d has no Reply-To or From address a reply can go to; name the recipients in the draft.", orig.ID)
			}
		}
	}
	o.MessageID = messageID(call, v, p.account.Address)
	if err := o.Check(p.account.Address); err != nil {
		return plan{}, refusef("Draft %s version %d cannot be sent: %s.", v.Lineage, v.Version, err)
	}
	p.out = o
	return p, nil
}

// replyTo is where a reply to o goes when its draft names no one: its Reply-To, else its
// From, with a sentence saying which.
func replyTo(o original) ([]*mail.Address, string) {
	if len(o.replyTo) > 0 {
		note := "To is the answered message's Reply-To."
		if len(o.from) > 0 && !sameAddresses(o.replyTo, o.from) {
			note = fmt.Sprintf("To is the answered message's Reply-To, which is not its From (%s): the sender chose where the answer goes.", strings.Join(displayAll(o.from), ", "))
		}
		return o.replyTo, note
	}
	return o.from, "To is the answered message's From."
}

func sameAddresses(a, b []*mail.Address) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !strings.EqualFold(a[i].Address, b[i].Address) {
			return false
		}
	}
	return true
}

// messageID is the Message-ID a send of version v gets: derived from the call (its run, its
// id within the run, its clock) and the version, so describing the call again gives the
// same one, and at the account's domain.
func messageID(call plugins.Call, v artifact.Artifact, from string) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{call.Tool, v.ID, call.RunID, call.CallID, call.Now.UTC().Format(time.RFC3339Nano)}, "\x00")))
	local := strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:15]))
	return "buddi." + local + "@" + from[strings.LastIndex(from, "@")+1:]
}

// summary is the envelope's one line.
func (p plan) summary() string {
	return fmt.Sprintf("Send “%s” from %s to %s", p.out.Subject, p.account.Address, plural(len(p.out.Recipients()), "recipient"))
}

// detail is the complete envelope: every recipient by kind, the body, the thread, the draft.
func (p plan) detail() map[string]any {
	body := sha256.Sum256([]byte(p.out.Body))
	d := map[string]any{
		"account":       p.account.Name,
		"from":          p.account.Address,
		"server":        p.server(),
		"to":            displayAll(p.out.To),
		"cc":            displayAll(p.out.Cc),
		"bcc":           displayAll(p.out.Bcc),
		"subject":       p.out.Subject,
		"body":          p.out.Body,
		"body_sha256":   hex.EncodeToString(body[:]),
		"message_id":    p.out.MessageID,
		"in_reply_to":   p.out.InReplyTo,
		"references":    append([]string{}, p.out.References...),
		"attachments":   []any{},
		"draft":         p.version.Lineage,
		"draft_version": p.version.Version,
		"draft_id":      p.version.ID,
		"draft_sha256":  p.version.SHA256,
	}
	if p.original != nil {
		d["in_reply_to_message"] = p.original.ID
	}
	return d
}

// server is the SMTP server the send reaches, with its TLS mode: part of the approved
// envelope, so an account row changed behind buddi's back after the approval (another
// host, port or mode) refuses the send instead of handing the message and the app password
// to another server.
func (p plan) server() string {
	return fmt.Sprintf("%s (%s)", net.JoinHostPort(p.account.SMTPHost, strconv.Itoa(p.account.SMTPPort)), p.account.SMTPTLS)
}

// digest is the sha256 of the whole message to send as the envelope describes it.
func (p plan) digest() string {
	raw, _ := json.Marshal(p.detail()) // map keys are sorted: the same plan, the same bytes
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// preview is what the owner reads: every recipient by kind, then the subject and the whole
// body as it will ship.
func (p plan) preview() string {
	var b strings.Builder
	fmt.Fprintf(&b, "From: %s (account %s)\n", p.account.Address, p.account.Name)
	fmt.Fprintf(&b, "Via: %s\n", p.server())
	for _, kind := range []struct {
		name string
		list []*mail.Address
	}{{"To", p.out.To}, {"Cc", p.out.Cc}, {"Bcc", p.out.Bcc}} {
		for _, a := range kind.list {
			fmt.Fprintf(&b, "%s: %s\n", kind.name, display(a))
		}
	}
	fmt.Fprintf(&b, "Subject: %s\n", p.out.Subject)
	if p.original != nil {
		fmt.Fprintf(&b, "In reply to: message %d from %s, “%s” <%s>\n", p.original.ID, HeaderLine(p.original.From), HeaderLine(p.original.Subject), p.out.InReplyTo)
	}
	if p.toNote != "" {
		b.WriteString(p.toNote + "\n")
	}
	if len(p.out.Bcc) > 0 {
		fmt.Fprintf(&b, "The Bcc recipients get the message without any recipient seeing them (%s).\n", plural(len(p.out.Bcc), "address"))
	}
	b.WriteString("No attachments.\n\n")
	b.WriteString(p.out.Body)
	if !strings.HasSuffix(p.out.Body, "\n") {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\n(draft %s version %d, sha256 %s; Message-ID <%s>)", p.version.Lineage, p.version.Version, p.version.SHA256[:12], p.out.MessageID)
	return b.String()
}

// Preconditions name a draft version's digest and the whole message's.
const (
	preconditionDraft   = "sha256 of the draft version"
	preconditionMessage = "sha256 of the message to send"
)

// envelope is the plan as the owner approves it.
func (p plan) envelope() plugins.Envelope {
	return plugins.Envelope{
		Summary: p.summary(),
		Effects: []plugins.Effect{plugins.EffectNetWrite},
		Targets: p.out.Recipients(),
		Detail:  p.detail(),
		Preview: p.preview(),
		Preconditions: []plugins.Precondition{
			{What: preconditionDraft, Value: p.version.SHA256},
			{What: preconditionMessage, Value: p.digest()},
		},
	}
}

// --- email.send and email.reply ---

// sendTool is email.send, or email.reply when reply is set.
type sendTool struct {
	p     *Plugin
	reply bool
}

var (
	_ plugins.Tool             = (*sendTool)(nil)
	_ plugins.DispatchReporter = (*sendTool)(nil)
	_ plugins.Tool             = (*draftTool)(nil)
)

func (t *sendTool) plugin() *Plugin { return t.p }

func (t *sendTool) name() string {
	if t.reply {
		return Name + ".reply"
	}
	return Name + ".send"
}

// Spec declares email.send or email.reply: gated, net_write.
func (t *sendTool) Spec() plugins.Spec {
	desc := "Propose sending one version of an email draft (from email.draft) from its account. The owner sees every recipient (To, Cc and Bcc), the subject and the whole body, and approves or refuses; nothing is sent before that. " +
		"Give the draft's artifact id and the exact version: a new version needs a new proposal. A draft that answers a message is sent with email.reply."
	if t.reply {
		desc = "Propose sending one version of an email draft that answers a received message (email.draft with in_reply_to_message), threaded under it: In-Reply-To and References come from the stored message, the subject gets \"Re: \" once, and a draft naming no recipient goes to the message's Reply-To, else its From. " +
			"The owner sees every recipient (To, Cc and Bcc), the subject and the whole body, and approves or refuses; nothing is sent before that. " + UntrustedMail
	}
	return plugins.Spec{
		Name:        t.name(),
		Description: desc,
		Schema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"draft":   {"type": "string", "minLength": 1, "maxLength": 64, "description": "The draft's artifact id (from email.draft)."},
				"version": {"type": "integer", "minimum": 1, "description": "The exact version of the draft to send."}
			},
			"required": ["draft", "version"],
			"additionalProperties": false
		}`),
		Effects: []plugins.Effect{plugins.EffectNetWrite},
		Tier:    plugins.TierGated,
		Timeout: SendTimeout,
	}
}

// ReportsDispatch is true: the send says when the message is about to be handed over (just
// before DATA), so a send that failed before it is known not to have happened.
func (t *sendTool) ReportsDispatch() bool { return true }

// Describe reads the exact draft version and renders the envelope: every recipient, the
// subject, the body, the thread. It writes nothing.
func (t *sendTool) Describe(ctx context.Context, call plugins.Call) (plugins.Envelope, error) {
	deps, err := t.p.ready()
	if err != nil {
		return plugins.Envelope{}, err
	}
	p, err := t.resolve(ctx, deps, call)
	if err != nil {
		return plugins.Envelope{}, err
	}
	return p.envelope(), nil
}

// Sent is the result data of email.send and email.reply: a record the canvas draws.
type Sent struct {
	Title      string `json:"title"`       // "Sent: <subject>"
	Account    string `json:"account"`     // the account's name
	From       string `json:"from"`        // its address
	To         string `json:"to"`          // the To addresses, comma separated
	Cc         string `json:"cc"`          // the Cc addresses
	Bcc        string `json:"bcc"`         // the Bcc addresses
	Subject    string `json:"subject"`     // the subject
	Recipients int    `json:"recipients"`  // how many addresses the server accepted
	MessageID  string `json:"message_id"`  // the Message-ID, without angle brackets
	InReplyTo  string `json:"in_reply_to"` // the Message-ID answered, for a reply
	Draft      string `json:"draft"`       // the draft's artifact id
	Version    int    `json:"version"`     // the version sent
	Server     string `json:"server"`      // the server's answer
}

// Execute re-reads the approved draft version, checks it and the whole message are what the
// owner approved, and sends it.
func (t *sendTool) Execute(ctx context.Context, call plugins.Call, approved *plugins.Envelope) (plugins.Result, error) {
	if approved == nil {
		return toolResult(refusef("%s sends only once the owner approved the message; nothing was sent.", t.name()))
	}
	deps, err := t.p.ready()
	if err != nil {
		return toolResult(refusef("%s", upper(err.Error())+"."))
	}
	p, err := t.resolve(ctx, deps, call)
	if err != nil {
		return toolResult(err)
	}
	env := p.envelope()
	for _, want := range env.Preconditions {
		if got, ok := precondition(approved, want.What); !ok || got != want.Value {
			return toolResult(refusef("The message is no longer the one the owner approved (its %s changed), so nothing was sent; propose it again.", want.What))
		}
	}
	sender := deps.Sender
	if sender == nil {
		sender = &Sender{}
	}
	rec, err := sender.Send(ctx, p.account, deps.Secrets, p.out)
	if errors.Is(err, plugins.ErrOutcomeUnknown) {
		return plugins.Result{}, err
	}
	if err != nil {
		return toolResult(refusef("%s", upper(strings.TrimPrefix(err.Error(), "email: "))+"."))
	}
	sent := Sent{
		Title: "Sent: " + p.out.Subject, Account: p.account.Name, From: p.account.Address,
		To: strings.Join(displayAll(p.out.To), ", "), Cc: strings.Join(displayAll(p.out.Cc), ", "), Bcc: strings.Join(displayAll(p.out.Bcc), ", "),
		Subject: p.out.Subject, Recipients: len(rec.Recipients), MessageID: rec.MessageID, InReplyTo: p.out.InReplyTo,
		Draft: p.version.Lineage, Version: p.version.Version, Server: strings.Join(strings.Fields(rec.Reply), " "),
	}
	data, err := json.Marshal(sent)
	if err != nil {
		return plugins.Result{}, err
	}
	return plugins.Result{
		Text: fmt.Sprintf("Sent “%s” from %s to %s as Message-ID <%s>; the server said: %s.", p.out.Subject, p.account.Address, plural(len(rec.Recipients), "recipient"), rec.MessageID, sent.Server),
		Data: data,
	}, nil
}

// precondition returns the value of the approved envelope's precondition named what.
func precondition(env *plugins.Envelope, what string) (string, bool) {
	for _, p := range env.Preconditions {
		if p.What == what {
			return p.Value, true
		}
	}
	return "", false
}

// upper capitalises a sentence's first letter.
func upper(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// --- email.draft ---

// draftTool is email.draft.
type draftTool struct{ p *Plugin }

func (t *draftTool) plugin() *Plugin { return t.p }

// draftArgs are email.draft's arguments.
type draftArgs struct {
	Account          string   `json:"account"`
	From             string   `json:"from"`
	To               []string `json:"to"`
	Cc               []string `json:"cc"`
	Bcc              []string `json:"bcc"`
	Subject          string   `json:"subject"`
	Body             string   `json:"body"`
	InReplyToMessage int64    `json:"in_reply_to_message"`
	Draft            string   `json:"draft"`
}

// Drafted is email.draft's result data.
type Drafted struct {
	Title            string `json:"title"`                         // "Draft: <subject>"
	Artifact         string `json:"artifact"`                      // the draft's artifact id (its first version's)
	Version          int    `json:"version"`                       // the version written
	VersionID        string `json:"version_id"`                    // that version's own id
	Account          string `json:"account"`                       // the account's name
	From             string `json:"from"`                          // its address
	To               string `json:"to"`                            // the To addresses, comma separated
	Cc               string `json:"cc"`                            // the Cc addresses
	Bcc              string `json:"bcc"`                           // the Bcc addresses
	Subject          string `json:"subject"`                       // the subject
	Bytes            int    `json:"bytes"`                         // the body's size
	InReplyToMessage int64  `json:"in_reply_to_message,omitempty"` // the message answered
	Send             string `json:"send"`                          // the tool that proposes it
}

// Spec declares email.draft: auto, it only writes a new artifact version.
func (t *draftTool) Spec() plugins.Spec {
	return plugins.Spec{
		Name: Name + ".draft",
		Description: "Write an email draft, saved as a file (artifact) the owner can open; nothing is sent. " +
			"Give the account's name, the recipients (To, Cc, Bcc: \"bob@example.org\" or \"Bob <bob@example.org>\"), a subject and a plain-text body. " +
			"The message is always from the account's own address. To answer a received message give in_reply_to_message (its id): the reply is threaded, the subject and To may be left out (they default to the message's, \"Re: \" added, and its Reply-To or From). " +
			"To revise a draft give draft (its artifact id): a new version is written. Then propose the send with email.send (or email.reply for an answer) with the artifact id and version. " +
			UntrustedMail,
		Schema: json.RawMessage(fmt.Sprintf(`{
			"type": "object",
			"properties": {
				"account":             {"type": "string", "minLength": 1, "maxLength": 40, "description": "The email account's name."},
				"from":                {"type": "string", "maxLength": 320, "description": "Leave out: a message is always from the account's address; any other is refused."},
				"to":                  {"type": "array", "maxItems": %[1]d, "items": {"type": "string", "minLength": 3, "maxLength": 400}},
				"cc":                  {"type": "array", "maxItems": %[1]d, "items": {"type": "string", "minLength": 3, "maxLength": 400}},
				"bcc":                 {"type": "array", "maxItems": %[1]d, "items": {"type": "string", "minLength": 3, "maxLength": 400}, "description": "Recipients no other recipient sees."},
				"subject":             {"type": "string", "maxLength": %[2]d},
				"body":                {"type": "string", "minLength": 1, "maxLength": %[3]d, "description": "The whole plain-text body."},
				"in_reply_to_message": {"type": "integer", "minimum": 1, "description": "The id of the received message this answers."},
				"draft":               {"type": "string", "maxLength": 64, "description": "To write a new version of a draft: its artifact id."}
			},
			"required": ["account", "body"],
			"additionalProperties": false
		}`, MaxRecipients, maxSubject, MaxMessageBody)),
		Effects: []plugins.Effect{plugins.EffectStateWrite},
		Tier:    plugins.TierAuto,
	}
}

// Describe says what is saved; it reads nothing.
func (t *draftTool) Describe(_ context.Context, call plugins.Call) (plugins.Envelope, error) {
	var a draftArgs
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return plugins.Envelope{}, fmt.Errorf("%s.draft: %w", Name, err)
	}
	what := fmt.Sprintf("Save an email draft “%s” in account %s, to %s", a.Subject, a.Account, plural(len(a.To)+len(a.Cc)+len(a.Bcc), "recipient"))
	if a.Draft != "" {
		what = fmt.Sprintf("Save a new version of email draft %s (“%s”, account %s)", a.Draft, a.Subject, a.Account)
	}
	return plugins.Envelope{Summary: what, Effects: []plugins.Effect{plugins.EffectStateWrite}, Preview: what,
		Detail: map[string]any{"account": a.Account, "draft": a.Draft, "subject": a.Subject, "in_reply_to_message": a.InReplyToMessage}}, nil
}

// Execute checks the draft and saves it as a new artifact version.
func (t *draftTool) Execute(ctx context.Context, call plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
	var a draftArgs
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return plugins.Result{}, fmt.Errorf("%s.draft: %w", Name, err)
	}
	deps, err := t.p.ready()
	if err != nil {
		return toolResult(refusef("%s", upper(err.Error())+"."))
	}
	saved, d, toNote, err := t.save(ctx, deps, call, a)
	if err != nil {
		return toolResult(err)
	}
	next := Name + ".send"
	if d.InReplyToMessage != 0 {
		next = Name + ".reply"
	}
	out := Drafted{
		Title: "Draft: " + d.Subject, Artifact: saved.Lineage, Version: saved.Version, VersionID: saved.ID,
		Account: d.Account, From: d.From, To: strings.Join(d.To, ", "), Cc: strings.Join(d.Cc, ", "), Bcc: strings.Join(d.Bcc, ", "),
		Subject: d.Subject, Bytes: len(d.Body), InReplyToMessage: d.InReplyToMessage, Send: next,
	}
	data, err := json.Marshal(out)
	if err != nil {
		return plugins.Result{}, err
	}
	text := fmt.Sprintf("Saved email draft %s version %d (“%s”, from %s to %s). Nothing is sent: propose it with %s {\"draft\": %q, \"version\": %d}, and the owner sees every recipient and the whole body before approving.",
		saved.Lineage, saved.Version, d.Subject, d.From, plural(len(d.To)+len(d.Cc)+len(d.Bcc), "named recipient"), next, saved.Lineage, saved.Version)
	if toNote != "" {
		text += " " + toNote
	}
	return plugins.Result{Text: text, Data: data}, nil
}

// save validates a and writes it as a new draft, or a new version of a.Draft.
func (t *draftTool) save(ctx context.Context, deps *Deps, call plugins.Call, a draftArgs) (artifact.Artifact, Draft, string, error) {
	acct, err := account(ctx, deps, a.Account)
	if err != nil {
		return artifact.Artifact{}, Draft{}, "", err
	}
	if f := strings.TrimSpace(a.From); f != "" {
		addr, perr := netmail.ParseAddress(f)
		if perr != nil || !strings.EqualFold(addr.Address, acct.Address) {
			return artifact.Artifact{}, Draft{}, "", refusef("Email is sent only from the account's own address (%s for %s), and %q is not it; leave from out.", acct.Address, acct.Name, a.From)
		}
	}
	o := Outgoing{Subject: a.Subject, Body: a.Body, MessageID: "draft@check"}
	if o.To, err = parseAddresses("To", a.To); err != nil {
		return artifact.Artifact{}, Draft{}, "", err
	}
	if o.Cc, err = parseAddresses("Cc", a.Cc); err != nil {
		return artifact.Artifact{}, Draft{}, "", err
	}
	if o.Bcc, err = parseAddresses("Bcc", a.Bcc); err != nil {
		return artifact.Artifact{}, Draft{}, "", err
	}
	toNote := ""
	if a.InReplyToMessage != 0 {
		orig, err := readOriginal(ctx, deps.Pool, acct, a.InReplyToMessage)
		if err != nil {
			return artifact.Artifact{}, Draft{}, "", err
		}
		if len(o.To) == 0 { // the send's rule: a reply naming no To goes to the original's Reply-To or From
			to, note := replyTo(orig)
			if len(to) == 0 {
				return artifact.Artifact{}, Draft{}, "", refusef("Message %d has no Reply-To or From address a reply can go to; name the recipients.", orig.ID)
			}
			o.To = to // for the check only: the draft keeps To empty, so the send reads the original again
			toNote = fmt.Sprintf("%s (%s) It goes to %s unless the draft names a To.", note, UntrustedMail, strings.Join(displayAll(to), ", "))
		}
		if o.Subject == "" {
			o.Subject = HeaderLine(orig.Subject)
		}
		o.Subject = replySubject(o.Subject)
	} else if strings.TrimSpace(a.Subject) == "" {
		return artifact.Artifact{}, Draft{}, "", refusef("A new message needs a subject; give one.")
	}
	if strings.TrimSpace(a.Body) == "" {
		return artifact.Artifact{}, Draft{}, "", refusef("The body is empty; give the message's text.")
	}
	if err := o.Check(acct.Address); err != nil {
		return artifact.Artifact{}, Draft{}, "", refusef("The draft cannot be saved: %s.", err)
	}
	toList, _ := parseAddresses("To", a.To)
	d := Draft{Account: acct.Name, From: acct.Address, To: storedAll(toList), Cc: storedAll(o.Cc), Bcc: storedAll(o.Bcc),
		Subject: o.Subject, Body: a.Body, InReplyToMessage: a.InReplyToMessage}
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return artifact.Artifact{}, Draft{}, "", err
	}
	prev := ""
	if a.Draft != "" {
		first, err := deps.Artifacts.Get(ctx, a.Draft)
		if errors.Is(err, artifact.ErrNotFound) || (err == nil && (!visible(first, call) || first.Source != draftSource)) {
			return artifact.Artifact{}, Draft{}, "", refusef("There is no email draft %s you may revise; leave draft out to start a new one.", a.Draft)
		}
		if err != nil {
			return artifact.Artifact{}, Draft{}, "", err
		}
		if first.Agent != call.Agent {
			return artifact.Artifact{}, Draft{}, "", refusef("Draft %s was written by %s, and only the agent that wrote a draft writes its versions; leave draft out to start your own.", a.Draft, first.Agent)
		}
		latest, err := deps.Artifacts.Latest(ctx, a.Draft)
		if err != nil {
			return artifact.Artifact{}, Draft{}, "", err
		}
		prev = latest.ID
	}
	saved, err := deps.Artifacts.Save(ctx, artifact.Artifact{
		Agent: call.Agent, ConversationID: call.ConversationID, RunID: call.RunID,
		Name: draftName(d.Subject), MediaType: DraftMediaType, Source: draftSource, Previous: prev,
	}, data)
	if nl, ok := errors.AsType[*artifact.NotLatestError](err); ok {
		return artifact.Artifact{}, Draft{}, "", refusef("%s.", upper(nl.Error()))
	}
	if err != nil {
		return artifact.Artifact{}, Draft{}, "", err
	}
	return saved, d, toNote, nil
}

// draftName is a draft's file name from its subject.
func draftName(subject string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(subject) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 60 {
			break
		}
	}
	name := strings.Trim(b.String(), "-")
	if name == "" {
		name = "draft"
	}
	return name + ".email-draft.json"
}
