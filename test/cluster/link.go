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
	"fmt"
	"net"
	"sync"
)

// link is a loopback TCP proxy between one replica and kube-apiserver, so a
// test can cut that replica off while the others still reach the API
// server. A cut is a partition, not a refusal: nothing is lost and nothing
// fails at once. Bytes read from either side are held until the link heals,
// and connections opened meanwhile wait to be connected; the replica's own
// timeouts (its renew deadline, HTTP/2 health checks, request timeouts) are
// what it meets, and what it sent during the cut arrives late.
type link struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	cut    bool
	healed chan struct{} // closed when not cut; replaced by Cut
	conns  map[net.Conn]struct{}
	closed bool
}

func newLink(target string) (*link, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &link{ln: ln, target: target, healed: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	close(l.healed)
	go l.serve()
	return l, nil
}

// addr is the host:port replicas dial instead of the API server's.
func (l *link) addr() string { return l.ln.Addr().String() }

func (l *link) serve() {
	for {
		in, err := l.ln.Accept()
		if err != nil {
			return
		}
		go l.carry(in)
	}
}

// carry connects in to the API server once the link is whole, and copies
// both ways until either side ends.
func (l *link) carry(in net.Conn) {
	if !l.track(in) {
		return
	}
	defer l.untrack(in)
	l.wait()
	out, err := net.Dial("tcp", l.target)
	if err != nil {
		return
	}
	if !l.track(out) {
		return
	}
	defer l.untrack(out)
	done := make(chan struct{}, 2)
	go func() { l.copy(out, in); done <- struct{}{} }()
	go func() { l.copy(in, out); done <- struct{}{} }()
	<-done
}

// copy forwards src to dst, holding what it read while the link is cut.
func (l *link) copy(dst, src net.Conn) {
	defer func() { _ = dst.Close(); _ = src.Close() }()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			l.wait()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// wait blocks while the link is cut.
func (l *link) wait() {
	l.mu.Lock()
	healed := l.healed
	l.mu.Unlock()
	<-healed
}

func (l *link) track(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		_ = c.Close()
		return false
	}
	l.conns[c] = struct{}{}
	return true
}

func (l *link) untrack(c net.Conn) {
	_ = c.Close()
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

// setCut cuts (true) or heals (false) the link.
func (l *link) setCut(cut bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cut == l.cut {
		return
	}
	l.cut = cut
	if cut {
		l.healed = make(chan struct{})
	} else {
		close(l.healed)
	}
}

// close stops the link and every connection through it.
func (l *link) close() error {
	l.setCut(false)
	l.mu.Lock()
	l.closed = true
	for c := range l.conns {
		_ = c.Close()
	}
	l.mu.Unlock()
	return l.ln.Close()
}

// Cut partitions replica name from kube-apiserver (KoordQueue.Links): what
// it sends and what is sent to it is held until Heal.
func (c *Cluster) Cut(name string) error { return c.setCut(name, true) }

// Heal ends the partition of replica name: what was held is delivered.
func (c *Cluster) Heal(name string) error { return c.setCut(name, false) }

func (c *Cluster) setCut(name string, cut bool) error {
	l, ok := c.links[name]
	if !ok {
		return fmt.Errorf("replica %s reaches the API server directly (set KoordQueue.Links for several replicas)", name)
	}
	l.setCut(cut)
	c.logf("link of %s to the API server: cut=%t", name, cut)
	return nil
}

// closeLinks stops every link.
func (c *Cluster) closeLinks() error {
	var errs []error
	for _, l := range c.links {
		if err := l.close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
