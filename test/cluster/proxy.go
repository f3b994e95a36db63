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
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
)

// apiProxy is an HTTP proxy between one replica and kube-apiserver, behind
// the replica's link. It terminates the replica's TLS with a certificate
// for 127.0.0.1 and forwards each request as it came, the bearer token and
// the Impersonate-* headers included, so the API server (its audit log,
// RBAC, the leader fences) still sees the replica's own user.
//
// It can stall the replica's watches of one resource: what the API server
// sends on them, their end included, is held until they are resumed, and
// watches opened meanwhile are held the same way; every other request
// passes. The link cannot do this: client-go carries all of a replica's
// requests, its Lease's and its watches', on one HTTP/2 connection.
type apiProxy struct {
	ln        net.Listener
	srv       *http.Server
	transport *http.Transport

	mu      sync.Mutex
	stalled map[string]chan struct{} // resource -> closed when resumed
}

// newAPIProxy serves on a loopback port with the certificate in
// certFile and keyFile, and forwards to target, trusting rootCAs.
func newAPIProxy(target *url.URL, rootCAs *x509.CertPool, certFile, keyFile string) (*apiProxy, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("proxy certificate: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &apiProxy{
		ln:        ln,
		transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: rootCAs}, ForceAttemptHTTP2: true},
		stalled:   map[string]chan struct{}{},
	}
	quiet := log.New(io.Discard, "", 0)
	forward := &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport: p.transport,
		// Watch events flow as they come.
		FlushInterval: -1,
		ErrorLog:      quiet,
	}
	p.srv = &http.Server{
		Handler:   p.handler(forward),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}},
		ErrorLog:  quiet,
	}
	go func() { _ = p.srv.ServeTLS(ln, "", "") }()
	return p, nil
}

// addr is the host:port the replica's link forwards to.
func (p *apiProxy) addr() string { return p.ln.Addr().String() }

func (p *apiProxy) handler(forward http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resource := watchOf(r)
		if resource == "" {
			forward.ServeHTTP(w, r)
			return
		}
		ctx := r.Context()
		forward.ServeHTTP(heldWriter{ResponseWriter: w, wait: func() error { return p.wait(ctx, resource) }}, r)
		// The end of the watch is held too.
		_ = p.wait(ctx, resource)
	})
}

// wait blocks while resource's watches are stalled, or until ctx ends.
func (p *apiProxy) wait(ctx context.Context, resource string) error {
	p.mu.Lock()
	resumed, stalled := p.stalled[resource]
	p.mu.Unlock()
	if !stalled {
		return nil
	}
	select {
	case <-resumed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// setStalled stalls (true) or resumes (false) the watches of resource.
func (p *apiProxy) setStalled(resource string, stall bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	resumed, stalled := p.stalled[resource]
	switch {
	case stall && !stalled:
		p.stalled[resource] = make(chan struct{})
	case !stall && stalled:
		close(resumed)
		delete(p.stalled, resource)
	}
}

// close resumes every watch and stops the proxy.
func (p *apiProxy) close() error {
	p.mu.Lock()
	for resource, resumed := range p.stalled {
		close(resumed)
		delete(p.stalled, resource)
	}
	p.mu.Unlock()
	err := p.srv.Close()
	p.transport.CloseIdleConnections()
	return err
}

// heldWriter writes a watch's response once its resource is not stalled.
type heldWriter struct {
	http.ResponseWriter
	wait func() error
}

func (w heldWriter) Write(b []byte) (int, error) {
	if err := w.wait(); err != nil {
		return 0, err
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets the reverse proxy flush the writer underneath.
func (w heldWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// watchOf returns the resource (its plural) that r watches, "" when r is
// not a watch: /api/v1/[namespaces/NS/]RESOURCE?watch=true, or the same
// under /apis/GROUP/VERSION.
func watchOf(r *http.Request) string {
	if w := r.URL.Query().Get("watch"); w != "true" && w != "1" {
		return ""
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) > 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) > 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return ""
	}
	if len(parts) > 2 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	return parts[0]
}

// certPool reads the PEM certificates in path.
func certPool(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("no certificate in %s", path)
	}
	return pool, nil
}

// StallWatch holds what kube-apiserver sends on replica name's watches of
// resource (its plural: "queueunits"), and on those it opens meanwhile,
// until ResumeWatch; its other requests (lists, gets, its Lease, its
// writes) pass. A lagging watch cache or a buffering load balancer does
// this to one replica.
func (c *Cluster) StallWatch(name, resource string) error {
	return c.setStalled(name, resource, true)
}

// ResumeWatch delivers what StallWatch held, and the rest as it comes.
func (c *Cluster) ResumeWatch(name, resource string) error {
	return c.setStalled(name, resource, false)
}

func (c *Cluster) setStalled(name, resource string, stall bool) error {
	p, ok := c.proxies[name]
	if !ok {
		return fmt.Errorf("replica %s reaches the API server directly (set KoordQueue.Links for several replicas)", name)
	}
	p.setStalled(resource, stall)
	c.logf("watches of %s by %s: stalled=%t", resource, name, stall)
	return nil
}

// closeProxies stops every proxy.
func (c *Cluster) closeProxies() error {
	var errs []error
	for _, p := range c.proxies {
		if err := p.close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
