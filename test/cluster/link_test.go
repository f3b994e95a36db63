/*
Copyright 2026 The Koordinator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package cluster

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// echo serves a TCP echo on loopback and returns its address.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); _ = c.Close() }()
		}
	}()
	return ln.Addr().String()
}

// roundTrip writes msg and reads it back within limit.
func roundTrip(c net.Conn, msg string, limit time.Duration) (string, error) {
	if _, err := c.Write([]byte(msg)); err != nil {
		return "", err
	}
	_ = c.SetReadDeadline(time.Now().Add(limit))
	buf := make([]byte, len(msg))
	_, err := io.ReadFull(c, buf)
	return string(buf), err
}

// A cut holds what is sent, on open connections and new ones, and delivers
// it when the link heals; nothing is lost.
func TestLinkHoldsWhatIsSentWhileCut(t *testing.T) {
	l, err := newLink(echo(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.close() })
	open, err := net.Dial("tcp", l.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = open.Close() }()
	if got, err := roundTrip(open, "before", 10*time.Second); err != nil || got != "before" {
		t.Fatalf("through the whole link: %q, %v", got, err)
	}

	l.setCut(true)
	// Not answered while cut: the read ends at its deadline.
	if got, err := roundTrip(open, "during", 300*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("an open connection was answered through a cut link: %q, %v", got, err)
	}
	late, err := net.Dial("tcp", l.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = late.Close() }()
	if got, err := roundTrip(late, "new", 300*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a connection opened while cut was answered: %q, %v", got, err)
	}

	l.setCut(false)
	buf := make([]byte, len("during"))
	_ = open.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(open, buf); err != nil || string(buf) != "during" {
		t.Fatalf("what was held on the open connection: %q, %v", buf, err)
	}
	buf = make([]byte, len("new"))
	_ = late.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(late, buf); err != nil || string(buf) != "new" {
		t.Fatalf("what was held on the new connection: %q, %v", buf, err)
	}
}
