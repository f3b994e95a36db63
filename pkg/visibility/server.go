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

package visibility

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/koordinator-sh/koord-queue/pkg/features"
)

// Options configure a Server.
type Options struct {
	// BindAddress is host:port to listen on (":8443").
	BindAddress string
	// CertDir holds tls.crt and tls.key; empty means a self-signed
	// certificate made at start (the APIService then needs
	// insecureSkipTLSVerify, or a caBundle the chart gets elsewhere).
	CertDir string
	// Listener, when set, is used instead of BindAddress (tests).
	Listener net.Listener
	// Gates are the scheduler's feature gates, published at .../featuregates.
	Gates features.Gates
}

// Server is the aggregated API server, a manager.Runnable that runs on every
// replica (see the package documentation on consistency).
type Server struct {
	opts    Options
	src     Source
	clients kubernetes.Interface
}

var (
	_ manager.Runnable               = (*Server)(nil)
	_ manager.LeaderElectionRunnable = (*Server)(nil)
)

// NewServer serves src; cs answers TokenReviews and SubjectAccessReviews and
// gives the extension-apiserver-authentication ConfigMap.
func NewServer(opts Options, src Source, cs kubernetes.Interface) *Server {
	return &Server{opts: opts, src: src, clients: cs}
}

// NeedLeaderElection is false: followers serve the same informer-fed state.
func (s *Server) NeedLeaderElection() bool { return false }

// Start serves until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	log := klog.FromContext(ctx).WithName("visibility")
	auth, err := NewDelegated(ctx, s.clients)
	if err != nil {
		return fmt.Errorf("visibility server: %w", err)
	}
	auth.Run(ctx)
	cert, err := s.certificate()
	if err != nil {
		return fmt.Errorf("visibility server: %w", err)
	}
	ln := s.opts.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", s.opts.BindAddress); err != nil {
			return fmt.Errorf("visibility server: %w", err)
		}
	}
	srv := &http.Server{
		Handler: WithAuth(NewHandler(s.src, WithGates(s.opts.Gates)), auth.Authenticator, auth.Authorizer),
		TLSConfig: &tls.Config{
			MinVersion:   tls.VersionTLS12,
			Certificates: []tls.Certificate{cert},
			// The front proxy and client-certificate users present a
			// certificate; the authenticator verifies it against the CAs.
			ClientAuth: tls.RequestClientCert,
		},
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Info("Serving the visibility API", "address", ln.Addr().String())
	if err := srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("visibility server: %w", err)
	}
	return nil
}

// certificate loads tls.crt and tls.key from CertDir or makes a self-signed pair.
func (s *Server) certificate() (tls.Certificate, error) {
	if s.opts.CertDir != "" {
		crt, key := filepath.Join(s.opts.CertDir, "tls.crt"), filepath.Join(s.opts.CertDir, "tls.key")
		cert, err := tls.LoadX509KeyPair(crt, key)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("load %s and %s: %w", crt, key, err)
		}
		return cert, nil
	}
	host, _ := os.Hostname()
	crtPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("koord-queue-visibility-server",
		[]net.IP{net.ParseIP("127.0.0.1")},
		[]string{"localhost", host, "koord-queue-visibility-server", "koord-queue-visibility-server.koord-queue.svc"})
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("self-signed certificate: %w", err)
	}
	return tls.X509KeyPair(crtPEM, keyPEM)
}
