package vault

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The file format's fixed values.
const (
	formatName    = "buddi-vault"
	formatVersion = 1
	aeadName      = "AES-256-GCM"
	saltLen       = 16
	nonceLen      = 12
	checkLen      = 32
)

// header is the authenticated, unencrypted part of vault.json. It is the AEAD's additional
// data, so no field of it can be changed without the file failing to open.
type header struct {
	Format  string       `json:"format"`
	Version int          `json:"version"`
	KDF     string       `json:"kdf"`
	Argon   *argonParams `json:"argon2id,omitempty"`
	Salt    []byte       `json:"salt"`
	AEAD    string       `json:"aead"`
	Check   []byte       `json:"check"`
}

// fileDoc is the whole of vault.json.
type fileDoc struct {
	header
	Nonce      []byte `json:"nonce"`
	Ciphertext []byte `json:"ciphertext"`
}

// payload is what the ciphertext holds.
type payload struct {
	Secrets map[string]string `json:"secrets"`
}

// additionalData binds the header to the ciphertext.
func (h header) additionalData() []byte {
	b, err := json.Marshal(h)
	if err != nil {
		panic(err) // a struct of strings, ints and byte slices always marshals
	}
	return append([]byte("buddi vault v1\x00"), b...)
}

// errMalformed is the cause of a "damaged" lock when the file does not parse.
var errMalformed = errors.New("malformed vault file")

// parseDoc decodes vault.json strictly: unknown fields, trailing data and wrong sizes are
// all malformed.
func parseDoc(data []byte) (fileDoc, error) {
	var doc fileDoc
	var probe struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(data, &probe); err != nil || probe.Format != formatName {
		return doc, fmt.Errorf("%w: not a buddi vault file", errMalformed)
	}
	if probe.Version != formatVersion {
		return doc, &newerError{version: probe.Version}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return doc, fmt.Errorf("%w: %v", errMalformed, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return doc, fmt.Errorf("%w: data after the object", errMalformed)
	}
	switch {
	case doc.AEAD != aeadName:
		return doc, fmt.Errorf("%w: aead %q", errMalformed, doc.AEAD)
	case len(doc.Salt) != saltLen || len(doc.Nonce) != nonceLen || len(doc.Check) != checkLen:
		return doc, fmt.Errorf("%w: field sizes", errMalformed)
	case doc.KDF == kdfRaw && doc.Argon == nil:
	case doc.KDF == kdfArgon2id && doc.Argon != nil && doc.Argon.ok():
	default:
		return doc, fmt.Errorf("%w: kdf %q", errMalformed, doc.KDF)
	}
	return doc, nil
}

// newerError is a file in a format version this build does not know.
type newerError struct{ version int }

func (e *newerError) Error() string { return fmt.Sprintf("vault file format version %d", e.version) }

// newAEAD returns AES-256-GCM under key.
func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// seal encrypts secrets under keys with a fresh random nonce and returns the file's bytes.
func seal(h header, keys subkeys, secrets map[string]string) ([]byte, error) {
	plain, err := json.Marshal(payload{Secrets: secrets})
	if err != nil {
		return nil, err
	}
	defer clear(plain)
	aead, err := newAEAD(keys.seal)
	if err != nil {
		return nil, err
	}
	doc := fileDoc{header: h, Nonce: make([]byte, nonceLen)}
	if _, err := rand.Read(doc.Nonce); err != nil {
		return nil, err
	}
	doc.Ciphertext = aead.Seal(nil, doc.Nonce, plain, h.additionalData())
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// open decrypts doc's secrets; an error means the ciphertext or the header does not
// authenticate under keys.
func open(doc fileDoc, keys subkeys) (map[string]string, error) {
	aead, err := newAEAD(keys.seal)
	if err != nil {
		return nil, err
	}
	plain, err := aead.Open(nil, doc.Nonce, doc.Ciphertext, doc.header.additionalData())
	if err != nil {
		return nil, err
	}
	defer clear(plain)
	var p payload
	if err := json.Unmarshal(plain, &p); err != nil {
		return nil, fmt.Errorf("%w: contents: %v", errMalformed, err)
	}
	if p.Secrets == nil {
		p.Secrets = map[string]string{}
	}
	for name, value := range p.Secrets {
		if CheckName(name) != nil || checkValue(name, value) != nil {
			return nil, fmt.Errorf("%w: contents: an invalid entry", errMalformed)
		}
	}
	return p.Secrets, nil
}
