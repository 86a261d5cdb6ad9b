package backup

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"testing"

	"buddi/plugins/mcp"
)

// A plugin's env lines go into an archive with their names only: their values (often an API
// key) never do, and the record still reads as one.
func TestPluginsRecordLosesItsEnvValues(t *testing.T) {
	home := t.TempDir()
	rec := mcp.Record{Plugins: []mcp.Plugin{{Name: "gh", Command: []string{"gh-mcp"}, Env: []string{"GITHUB_TOKEN=ghp_s3cret-value", "LOG=debug"}}}}
	if err := rec.Save(home); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	aw, err := newArchiveWriter(&buf, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := addPluginsRecord(aw, mcp.RecordPath(home)); err != nil {
		t.Fatal(err)
	}
	if err := aw.finish(&Manifest{}); err != nil {
		t.Fatal(err)
	}
	gz, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var member []byte
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Name == "plugins.json" {
			if member, err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
	}
	var got mcp.Record
	if err := json.Unmarshal(member, &got); err != nil || len(got.Plugins) != 1 {
		t.Fatalf("the archived record: %s (%v)", member, err)
	}
	if env := got.Plugins[0].Env; len(env) != 2 || env[0] != "GITHUB_TOKEN=" || env[1] != "LOG=" {
		t.Fatalf("the archived env lines: %q", env)
	}
}
