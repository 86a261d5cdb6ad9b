package db

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
)

func TestMask(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"postgres://ann:s3cret@db.example:5433/buddi", "postgres://ann:xxxxx@db.example:5433/buddi"},
		{"postgres://ann@db.example/buddi", "postgres://ann@db.example/buddi"},
		{"postgres://db.example/buddi?password=s3cret&sslmode=disable", "postgres://db.example/buddi?password=xxxxx&sslmode=disable"},
		{"host=db user=ann password=s3cret dbname=x", "host=db user=ann password=xxxxx dbname=x"},
		{"host=db password='a b\\'c' dbname=x", "host=db password=xxxxx dbname=x"},
	}
	for _, tt := range tests {
		if got := Mask(tt.in); got != tt.want {
			t.Errorf("Mask(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if strings.Contains(Mask(tt.in), "s3cret") {
			t.Errorf("Mask(%q) leaks the password", tt.in)
		}
	}
}

// A port nobody listens on: refused at once, named, password masked.
func TestOpenRefused(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = Open(context.Background(), "postgres://ann:s3cret@"+addr+"/buddi", Options{})
	var ue *UnreachableError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v, want UnreachableError", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "s3cret") || !strings.Contains(msg, addr) || strings.Contains(msg, "\n") {
		t.Errorf("message %q: want the address, no password, one line", msg)
	}
}

// A server that accepts and never answers: the attempt ends by the connect timeout.
func TestOpenSilentServer(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 3*ConnectTimeout)
	defer cancel()
	_, err = Open(ctx, "postgres://ann:s3cret@"+l.Addr().String()+"/buddi", Options{})
	if err == nil || ctx.Err() != nil {
		t.Fatalf("err = %v, ctx = %v: want a timeout error before the test's deadline", err, ctx.Err())
	}
	if !strings.Contains(err.Error(), "no answer within") {
		t.Errorf("message %q does not say the server did not answer", err)
	}
}

// The embedded cluster's connection strings carry the password: Describe names the socket,
// database and user, and never the password.
func TestDescribeHidesPassword(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{
		"host=/home/ann/.buddi/pg/run port=5432 user=buddi_app password='s3cretS3cretS3cret' dbname=buddi sslmode=disable",
		"postgres://buddi_app:s3cretS3cretS3cret@db.example:5433/buddi",
		"host=/x user=buddi_app password=s3cretS3cretS3cret dbname=buddi port=notaport",
	} {
		got := Describe(dsn)
		if strings.Contains(got, "s3cret") || !strings.Contains(got, "buddi_app") {
			t.Errorf("Describe(%q) = %q: want the user and no password", dsn, got)
		}
	}
}
