package doctor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"buddi/dbsource"
)

// checkEmail reports each email account's source: the sentence of its last failed read,
// or when it was last read. An account never read yet, with no error, is said to wait for
// buddi serve. With no account (or no email schema yet) it says nothing.
func (r *Report) checkEmail(ctx context.Context, src *dbsource.Source) {
	rows, err := src.Pool.Query(ctx, `SELECT name, last_sync, last_error, last_error_at FROM email.accounts ORDER BY name`)
	if err != nil {
		return // no email schema: the migrations check says so
	}
	defer rows.Close()
	for rows.Next() {
		var name, lastErr string
		var synced, failedAt *time.Time
		if err := rows.Scan(&name, &synced, &lastErr, &failedAt); err != nil {
			return
		}
		check := "email " + name
		switch {
		case lastErr != "":
			at := ""
			if failedAt != nil {
				at = " (" + failedAt.Local().Format("Jan 2 15:04") + ")"
			}
			r.warn(check, strings.TrimSuffix(lastErr, ".")+at+".", fmt.Sprintf("Fix what it names, then check with `buddi email test %s`.", name))
		case synced == nil:
			r.ok(check, "not read yet: buddi serve reads it within a minute of starting.")
		default:
			r.ok(check, "read "+synced.Local().Format("Jan 2 15:04:05")+".")
		}
	}
}
