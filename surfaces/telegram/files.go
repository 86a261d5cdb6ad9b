package telegram

import (
	"context"
	"encoding/json"
	"fmt"
)

// fileIn keeps a photo or document of up to MaxFile in the artifacts store and returns the
// line the turn carries about it; a larger file, or one that cannot be fetched, gets one polite
// sentence (ok false).
func (b *Bot) fileIn(ctx context.Context, m *Message) (string, bool) {
	var id, name, mediaType string
	var size int64
	if len(m.Document) > 0 {
		var d struct {
			FileID   string `json:"file_id"`
			FileName string `json:"file_name"`
			MimeType string `json:"mime_type"`
			FileSize int64  `json:"file_size"`
		}
		_ = json.Unmarshal(m.Document, &d)
		id, name, mediaType, size = d.FileID, d.FileName, d.MimeType, d.FileSize
	} else {
		var sizes []struct {
			FileID   string `json:"file_id"`
			FileSize int64  `json:"file_size"`
			Width    int    `json:"width"`
		}
		_ = json.Unmarshal(m.Photo, &sizes)
		for _, s := range sizes { // the largest
			if id == "" || s.FileSize > size {
				id, size = s.FileID, s.FileSize
			}
		}
		name, mediaType = "photo.jpg", "image/jpeg"
	}
	if name == "" {
		name = "file"
	}
	if mediaType == "" {
		mediaType = "application/octet-stream"
	}
	if id == "" || b.d.Artifacts == nil {
		b.send(ctx, m.Chat.ID, "I can't take files here; paste the text, or send it on the dashboard.")
		return "", false
	}
	if size > MaxFile {
		b.send(ctx, m.Chat.ID, fmt.Sprintf("That file is over %d MB, more than I can take from Telegram; send it on the dashboard instead.", MaxFile>>20))
		return "", false
	}
	data, err := b.d.API.Download(ctx, id)
	if err != nil {
		b.d.Log.Warn("download a file", "err", err)
		b.send(ctx, m.Chat.ID, "I couldn't fetch that file from Telegram; please send it again.")
		return "", false
	}
	art, err := b.d.Artifacts(ctx, name, mediaType, data)
	if err != nil {
		b.d.Log.Warn("keep a file", "err", err)
		b.send(ctx, m.Chat.ID, "I couldn't keep that file; please send it again.")
		return "", false
	}
	return fmt.Sprintf("[The owner attached %s (%s, %d KB), kept as artifact %s.]", name, mediaType, (len(data)+1023)/1024, art), true
}
