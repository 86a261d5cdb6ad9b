// Package telegram is the owner's phone surface (seed 004): a long poller that persists every
// update before the offset advances, pairing by numeric user id and private chat id, replies
// streamed by editing one message, and approval cards whose buttons are bound to their action.
// It is a thin adapter: it never names an agent (roles do) and decides nothing itself.
package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// DefaultAPIURL is the public Bot API; BUDDI_TELEGRAM_API_URL replaces it (a self-hosted Bot
// API server, or the tests').
const DefaultAPIURL = "https://api.telegram.org"

// API calls the Bot API with one bot's token. The token is never in an error's text.
type API struct {
	Base  string       // the API's base URL, without a trailing slash
	Token string       // the bot's token (from the vault)
	HTTP  *http.Client // the one outbound transport's client
}

// APIError is the Bot API's answer to a call that did not work.
type APIError struct {
	Code        int           // error_code: 401 (the token was revoked), 429, 400, …
	Description string        // the API's description
	RetryAfter  time.Duration // parameters.retry_after, for a 429
}

// Error says the code and the description.
func (e *APIError) Error() string {
	return fmt.Sprintf("telegram: %d %s", e.Code, e.Description)
}

// Unauthorized reports whether err is the API refusing the token.
func Unauthorized(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Code == http.StatusUnauthorized
}

// call posts params as JSON to method and decodes the result into out.
func (a *API) call(ctx context.Context, method string, params, out any) error {
	body, err := json.Marshal(params)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.Base+"/bot"+a.Token+"/"+method, bytes.NewReader(body))
	if err != nil {
		return errors.New("telegram: " + strings.ReplaceAll(err.Error(), a.Token, "‹token›"))
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("telegram %s: %s", method, strings.ReplaceAll(err.Error(), a.Token, "‹token›"))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("telegram %s: %w", method, err)
	}
	var env struct {
		OK          bool            `json:"ok"`
		Result      json.RawMessage `json:"result"`
		ErrorCode   int             `json:"error_code"`
		Description string          `json:"description"`
		Parameters  struct {
			RetryAfter int `json:"retry_after"`
		} `json:"parameters"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("telegram %s: status %d, not the Bot API's answer", method, resp.StatusCode)
	}
	if !env.OK {
		code := env.ErrorCode
		if code == 0 {
			code = resp.StatusCode
		}
		return &APIError{Code: code, Description: env.Description, RetryAfter: time.Duration(env.Parameters.RetryAfter) * time.Second}
	}
	if out != nil {
		return json.Unmarshal(env.Result, out)
	}
	return nil
}

// User is a Telegram user.
type User struct {
	ID        int64  `json:"id"`                 // the numeric id: the only identity trusted
	IsBot     bool   `json:"is_bot"`             // a bot
	FirstName string `json:"first_name"`         // a display name, never trusted
	Username  string `json:"username,omitempty"` // never trusted
}

// Chat is a Telegram chat; only a "private" one is ever answered.
type Chat struct {
	ID   int64  `json:"id"`   // the chat's id
	Type string `json:"type"` // private, group, supergroup or channel
}

// Message is an incoming or sent message.
type Message struct {
	MessageID int64           `json:"message_id"`         // its id in the chat
	From      *User           `json:"from,omitempty"`     // the sender
	Chat      Chat            `json:"chat"`               // where
	Text      string          `json:"text,omitempty"`     // its text
	Photo     json.RawMessage `json:"photo,omitempty"`    // a photo, if any
	Document  json.RawMessage `json:"document,omitempty"` // a file, if any
	Voice     json.RawMessage `json:"voice,omitempty"`    // a voice note, if any
	Caption   string          `json:"caption,omitempty"`  // a file's caption
	// ForwardOrigin marks a forward: never trusted as the owner's own words.
	ForwardOrigin json.RawMessage `json:"forward_origin,omitempty"`
}

// CallbackQuery is a tap on an inline button.
type CallbackQuery struct {
	ID      string   `json:"id"`                // answered with AnswerCallbackQuery
	From    User     `json:"from"`              // who tapped
	Message *Message `json:"message,omitempty"` // the card tapped
	Data    string   `json:"data"`              // the button's callback data
}

// Update is one update from getUpdates.
type Update struct {
	UpdateID      int64          `json:"update_id"`                // increasing; the dedup key
	Message       *Message       `json:"message,omitempty"`        // a message, or
	CallbackQuery *CallbackQuery `json:"callback_query,omitempty"` // a button tap
}

// Button is an inline keyboard button.
type Button struct {
	Text         string `json:"text"`          // its label
	CallbackData string `json:"callback_data"` // what a tap sends back
}

// Markup is an inline keyboard.
type Markup struct {
	InlineKeyboard [][]Button `json:"inline_keyboard"` // rows of buttons
}

// GetMe returns the bot.
func (a *API) GetMe(ctx context.Context) (User, error) {
	var u User
	err := a.call(ctx, "getMe", struct{}{}, &u)
	return u, err
}

// GetUpdates long-polls from offset for up to timeout. ctx must end a little after timeout:
// a half-open connection must not leave the bot deaf.
func (a *API) GetUpdates(ctx context.Context, offset int64, timeout time.Duration) ([]Update, error) {
	var us []Update
	err := a.call(ctx, "getUpdates", map[string]any{"offset": offset, "timeout": int(timeout.Seconds()),
		"allowed_updates": []string{"message", "callback_query"}}, &us)
	return us, err
}

// SendMessage sends text to chat, with markup when given. The text is Markdown, rendered as
// Telegram's HTML; when Telegram refuses the rendering, the plain text goes instead.
func (a *API) SendMessage(ctx context.Context, chat int64, text string, markup *Markup) (Message, error) {
	params := map[string]any{"chat_id": chat, "text": renderHTML(text), "parse_mode": "HTML"}
	if markup != nil {
		params["reply_markup"] = markup
	}
	var m Message
	err := a.call(ctx, "sendMessage", params, &m)
	if refusedFormatting(err) {
		params["text"] = text
		delete(params, "parse_mode")
		err = a.call(ctx, "sendMessage", params, &m)
	}
	return m, err
}

// refusedFormatting reports Telegram refusing a message's entities.
func refusedFormatting(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Code == http.StatusBadRequest && strings.Contains(strings.ToLower(ae.Description), "parse entities")
}

// EditMessageText replaces a message's text (and its buttons: nil removes them).
func (a *API) EditMessageText(ctx context.Context, chat, message int64, text string, markup *Markup) error {
	params := map[string]any{"chat_id": chat, "message_id": message, "text": renderHTML(text), "parse_mode": "HTML"}
	if markup != nil {
		params["reply_markup"] = markup
	} else {
		params["reply_markup"] = Markup{InlineKeyboard: [][]Button{}}
	}
	err := a.call(ctx, "editMessageText", params, nil)
	if refusedFormatting(err) {
		params["text"] = text
		delete(params, "parse_mode")
		err = a.call(ctx, "editMessageText", params, nil)
	}
	var ae *APIError
	if errors.As(err, &ae) && strings.Contains(ae.Description, "message is not modified") {
		return nil
	}
	return err
}

// AnswerCallbackQuery acknowledges a button tap with a short text.
func (a *API) AnswerCallbackQuery(ctx context.Context, id, text string) error {
	return a.call(ctx, "answerCallbackQuery", map[string]any{"callback_query_id": id, "text": text}, nil)
}

// MaxFile is the largest file the bot takes in (the Bot API's download limit).
const MaxFile = 20 << 20

// Download fetches the file fileID (getFile, then the file URL), at most MaxFile bytes.
func (a *API) Download(ctx context.Context, fileID string) ([]byte, error) {
	var f struct {
		FilePath string `json:"file_path"`
		FileSize int64  `json:"file_size"`
	}
	if err := a.call(ctx, "getFile", map[string]any{"file_id": fileID}, &f); err != nil {
		return nil, err
	}
	if f.FileSize > MaxFile {
		return nil, fmt.Errorf("telegram: the file is %d bytes, over %d", f.FileSize, MaxFile)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.Base+"/file/bot"+a.Token+"/"+f.FilePath, nil)
	if err != nil {
		return nil, errors.New("telegram: the file's address is not valid")
	}
	resp, err := a.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("telegram: download: %s", strings.ReplaceAll(err.Error(), a.Token, "‹token›"))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("telegram: download: status %d", resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFile {
		return nil, fmt.Errorf("telegram: the file is over %d bytes", MaxFile)
	}
	return data, nil
}

// Command is a menu entry.
type Command struct {
	Command     string `json:"command"`     // without the slash
	Description string `json:"description"` // what it does
}

// SetMyCommands publishes the menu for one chat only.
func (a *API) SetMyCommands(ctx context.Context, chat int64, cmds []Command) error {
	return a.call(ctx, "setMyCommands", map[string]any{"commands": cmds, "scope": map[string]any{"type": "chat", "chat_id": chat}}, nil)
}
