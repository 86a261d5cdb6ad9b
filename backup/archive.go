package backup

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"filippo.io/age"

	"buddi/internal/bytesize"
)

// ManifestName is the archive's last member: the manifest, which lists every other member.
const ManifestName = "manifest.json"

// DumpName is the member that holds pg_dump's custom-format dump.
const DumpName = "db.dump"

// ErrWrongPassphrase means an encrypted archive did not open with the passphrase given.
var ErrWrongPassphrase = errors.New("backup: wrong passphrase")

// ErrNeedsPassphrase means the archive is encrypted and no passphrase was given.
var ErrNeedsPassphrase = errors.New("backup: the archive is encrypted")

// CorruptError is a member whose bytes are not the ones the manifest recorded.
type CorruptError struct {
	Member string // the member's name in the archive
	Why    string // what does not match
}

// Error says what happened in one sentence.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("the backup is damaged: member %s %s; it cannot be trusted", e.Member, e.Why)
}

// ageHeader starts every age file.
var ageHeader = []byte("age-encryption.org/")

// archiveWriter writes members into a tar.gz, optionally inside age, hashing each.
type archiveWriter struct {
	enc     io.WriteCloser // age's writer, or nil
	gz      *gzip.Writer
	tw      *tar.Writer
	members []Member
}

func newArchiveWriter(w io.Writer, passphrase string) (*archiveWriter, error) {
	a := &archiveWriter{}
	if passphrase != "" {
		r, err := age.NewScryptRecipient(passphrase)
		if err != nil {
			return nil, fmt.Errorf("encrypt the backup: %w", err)
		}
		if a.enc, err = age.Encrypt(w, r); err != nil {
			return nil, fmt.Errorf("encrypt the backup: %w", err)
		}
		w = a.enc
	}
	a.gz = gzip.NewWriter(w)
	a.tw = tar.NewWriter(a.gz)
	return a, nil
}

// add writes one member from r (size bytes) and records its checksum.
func (a *archiveWriter) add(name string, size int64, mod time.Time, r io.Reader) error {
	hdr := &tar.Header{Name: name, Mode: 0o600, Size: size, ModTime: mod.UTC(), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
	if err := a.tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("write %s into the backup: %w", name, err)
	}
	h := sha256.New()
	n, err := io.Copy(a.tw, io.TeeReader(r, h))
	if err != nil {
		return fmt.Errorf("write %s into the backup: %w", name, err)
	}
	if n != size {
		return fmt.Errorf("write %s into the backup: it changed size while it was read (%d of %d bytes)", name, n, size)
	}
	a.members = append(a.members, Member{Name: name, Size: size, SHA256: hex.EncodeToString(h.Sum(nil))})
	return nil
}

// addFile writes the file at p as member name.
func (a *archiveWriter) addFile(name, p string) error {
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("read %s for the backup: %w", p, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("read %s for the backup: %w", p, err)
	}
	return a.add(name, fi.Size(), fi.ModTime(), f)
}

// addTree writes every regular file under dir as prefix/<relative path>; a missing dir adds
// nothing. Links are not followed (an agent's directory could point anywhere).
func (a *archiveWriter) addTree(prefix, dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("read %s for the backup: %w", p, err)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		return a.addFile(path.Join(prefix, filepath.ToSlash(rel)), p)
	})
}

// finish writes the manifest (with every member's checksum) and closes the layers.
func (a *archiveWriter) finish(m *Manifest) error {
	m.Members = a.members
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	hdr := &tar.Header{Name: ManifestName, Mode: 0o600, Size: int64(len(raw)), ModTime: m.CreatedAt, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
	if err := a.tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("write the manifest: %w", err)
	}
	if _, err := a.tw.Write(raw); err != nil {
		return fmt.Errorf("write the manifest: %w", err)
	}
	if err := a.tw.Close(); err != nil {
		return fmt.Errorf("finish the backup: %w", err)
	}
	if err := a.gz.Close(); err != nil {
		return fmt.Errorf("finish the backup: %w", err)
	}
	if a.enc != nil {
		if err := a.enc.Close(); err != nil {
			return fmt.Errorf("finish the encrypted backup: %w", err)
		}
	}
	return nil
}

// Encrypted reports whether the archive at p is encrypted (an age file).
func Encrypted(p string) (bool, error) {
	f, err := os.Open(p)
	if err != nil {
		return false, fmt.Errorf("open the backup: %w", err)
	}
	defer f.Close()
	head := make([]byte, len(ageHeader))
	n, _ := io.ReadFull(f, head)
	return bytes.Equal(head[:n], ageHeader), nil
}

// Unpacked is an archive read into a directory, every member checked against the manifest.
type Unpacked struct {
	Dir      string   // the directory the members were written to (by their names)
	Manifest Manifest // the archive's manifest
}

// Unpack reads the archive at p into dir (which must exist), checking every member's size and
// SHA-256 against the manifest, and that no member is missing or extra. passphrase opens an
// encrypted archive. progress, when not nil, hears a line per large member.
func Unpack(p, passphrase, dir string, progress func(string)) (*Unpacked, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("open the backup: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	var r io.Reader = br
	head, _ := br.Peek(len(ageHeader))
	if bytes.Equal(head, ageHeader) {
		if passphrase == "" {
			return nil, ErrNeedsPassphrase
		}
		id, err := age.NewScryptIdentity(passphrase)
		if err != nil {
			return nil, fmt.Errorf("decrypt the backup: %w", err)
		}
		if r, err = age.Decrypt(br, id); err != nil {
			var nomatch *age.NoIdentityMatchError
			if errors.As(err, &nomatch) || strings.Contains(err.Error(), "incorrect passphrase") {
				return nil, ErrWrongPassphrase
			}
			return nil, fmt.Errorf("decrypt the backup: %w", err)
		}
	}
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("the backup %s is not a buddi backup (not a gzip stream): %w", p, err)
	}
	tr := tar.NewReader(gz)
	got := map[string]Member{}
	var order []string
	var manifest []byte
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &CorruptError{Member: "(archive)", Why: "cannot be read (" + err.Error() + ")"}
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil, &CorruptError{Member: hdr.Name, Why: "is not a regular file"}
		}
		if hdr.Name == ManifestName {
			if manifest, err = io.ReadAll(io.LimitReader(tr, 64<<20)); err != nil {
				return nil, &CorruptError{Member: ManifestName, Why: "cannot be read (" + err.Error() + ")"}
			}
			continue
		}
		dest, err := memberPath(dir, hdr.Name)
		if err != nil {
			return nil, err
		}
		if _, dup := got[hdr.Name]; dup {
			return nil, &CorruptError{Member: hdr.Name, Why: "appears twice"}
		}
		if hdr.Size > 64<<20 && progress != nil {
			progress(fmt.Sprintf("reading %s (%s)", hdr.Name, bytesize.String(hdr.Size)))
		}
		m, err := writeMember(dest, tr)
		if err != nil {
			return nil, &CorruptError{Member: hdr.Name, Why: "cannot be read (" + err.Error() + ")"}
		}
		m.Name = hdr.Name
		got[hdr.Name] = m
		order = append(order, hdr.Name)
	}
	if manifest == nil {
		return nil, &CorruptError{Member: ManifestName, Why: "is missing"}
	}
	var man Manifest
	if err := json.Unmarshal(manifest, &man); err != nil {
		return nil, &CorruptError{Member: ManifestName, Why: "is not valid JSON"}
	}
	if man.Format != FormatVersion {
		return nil, fmt.Errorf("the backup is of format %d and this buddi reads format %d: use the buddi version that made it (%s)", man.Format, FormatVersion, man.BuddiVersion)
	}
	listed := map[string]bool{}
	for _, want := range man.Members {
		listed[want.Name] = true
		have, ok := got[want.Name]
		switch {
		case !ok:
			return nil, &CorruptError{Member: want.Name, Why: "is missing"}
		case have.Size != want.Size:
			return nil, &CorruptError{Member: want.Name, Why: fmt.Sprintf("has %d bytes where the manifest says %d", have.Size, want.Size)}
		case have.SHA256 != want.SHA256:
			return nil, &CorruptError{Member: want.Name, Why: "does not match its checksum in the manifest"}
		}
	}
	for _, name := range order {
		if !listed[name] {
			return nil, &CorruptError{Member: name, Why: "is not in the manifest"}
		}
	}
	return &Unpacked{Dir: dir, Manifest: man}, nil
}

// memberPath is where member name goes under dir; a name that leaves dir is refused.
func memberPath(dir, name string) (string, error) {
	clean := path.Clean(name)
	if path.IsAbs(clean) || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(name, "\\") {
		return "", &CorruptError{Member: name, Why: "names a path outside the backup"}
	}
	return filepath.Join(dir, filepath.FromSlash(clean)), nil
}

func writeMember(dest string, r io.Reader) (Member, error) {
	if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
		return Member{}, err
	}
	f, err := os.OpenFile(dest, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return Member{}, err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Member{}, err
	}
	return Member{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}
