package dashboard

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// A write that found the disk full is answered 507 with what to do, not a generic 500:
// PostgreSQL's disk_full and a file's ENOSPC alike, however deeply wrapped.
func TestDiskFullIsAnsweredAsSuch(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("insert message: %w", &pgconn.PgError{Code: "53100", Message: "could not extend file: No space left on device"}),
		fmt.Errorf("store artifact: %w", &fs.PathError{Op: "write", Path: "/home/o/.buddi/artifacts/x", Err: syscall.ENOSPC}),
	} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("POST", "/api/conversations", nil)
		if !slow(w, r, err) {
			t.Errorf("%v: not recognised", err)
			continue
		}
		var body struct{ Error string }
		_ = json.NewDecoder(w.Body).Decode(&body)
		if w.Code != http.StatusInsufficientStorage || !strings.Contains(body.Error, "disk that holds buddi's data is full") {
			t.Errorf("%v: %d %q", err, w.Code, body.Error)
		}
	}
	for _, err := range []error{
		&pgconn.PgError{Code: "23505"},
		fmt.Errorf("open: %w", syscall.EACCES),
	} {
		if slow(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil), err) {
			t.Errorf("%v was taken for a full disk or a slow request", err)
		}
	}
}
