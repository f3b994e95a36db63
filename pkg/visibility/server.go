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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/koordinator-sh/koord-queue/pkg/features"
)

// DefaultMaxRequestsInFlight bounds the requests served at once when Options
// give no bound; kube-apiserver's default for reads.
const DefaultMaxRequestsInFlight = 400

// Options configure a Server.
type Options struct {
	// BindAddress is host:port to listen on (":8443").
	BindAddress string
	// CertDir holds tls.crt and tls.key, read again whenever they change;
	// empty means a self-signed certificate made at start (the APIService
	// then needs insecureSkipTLSVerify, or a caBundle the chart gets
	// elsewhere).
	CertDir string
	// Listener, when set, is used instead of BindAddress (tests).
	Listener net.Listener
	// Gates are the scheduler's feature gates, published at .../featuregates.
	Gates features.Gates
	// MaxRequestsInFlight bounds the requests served at once; those beyond
	// it are answered 429 with Retry-After. 0 means DefaultMaxRequestsInFlight.
	MaxRequestsInFlight int
	// UI, when set, is served under .../ui/ (the web view, pkg/visibility/ui);
	// nil leaves it off.
	UI http.Handler
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
	if opts.MaxRequestsInFlight <= 0 {
		opts.MaxRequestsInFlight = DefaultMaxRequestsInFlight
	}
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
	tlsConfig, err := s.servingTLS(ctx)
	if err != nil {
		return fmt.Errorf("visibility server: %w", err)
	}
	ln := s.opts.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", s.opts.BindAddress); err != nil {
			return fmt.Errorf("visibility server: %w", err)
		}
	}
	handler := WithAuth(NewHandler(s.src, WithGates(s.opts.Gates), WithUI(s.opts.UI)), auth.Authenticator, auth.Authorizer)
	srv := &http.Server{
		Handler:           withMaxInFlight(handler, s.opts.MaxRequestsInFlight),
		TLSConfig:         tlsConfig,
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

// servingTLS is the TLS configuration with the serving certificate, which
// follows tls.crt and tls.key in CertDir until ctx ends (a rotated Secret is
// served without a restart), or a self-signed pair made once.
func (s *Server) servingTLS(ctx context.Context) (*tls.Config, error) {
	var serving dynamiccertificates.CertKeyContentProvider
	var files *dynamiccertificates.DynamicCertKeyPairContent
	if s.opts.CertDir != "" {
		crt, key := filepath.Join(s.opts.CertDir, "tls.crt"), filepath.Join(s.opts.CertDir, "tls.key")
		var err error
		if files, err = dynamiccertificates.NewDynamicServingContentFromFiles("visibility-serving-cert", crt, key); err != nil {
			return nil, fmt.Errorf("load %s and %s: %w", crt, key, err)
		}
		serving = files
	} else {
		crtPEM, keyPEM, err := selfSigned()
		if err != nil {
			return nil, err
		}
		if serving, err = dynamiccertificates.NewStaticCertKeyContent("visibility-self-signed", crtPEM, keyPEM); err != nil {
			return nil, fmt.Errorf("self-signed certificate: %w", err)
		}
	}
	base := &tls.Config{
		MinVersion: tls.VersionTLS12,
		// The front proxy and client-certificate users present a
		// certificate; the authenticator verifies it against the CAs.
		ClientAuth: tls.RequestClientCert,
	}
	ctrl := dynamiccertificates.NewDynamicServingCertificateController(base, nil, serving, nil, nil)
	if err := ctrl.RunOnce(); err != nil {
		return nil, fmt.Errorf("serving certificate: %w", err)
	}
	go ctrl.Run(1, ctx.Done())
	if files != nil {
		files.AddListener(ctrl)
		go files.Run(ctx, 1)
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, GetConfigForClient: ctrl.GetConfigForClient}, nil
}

// selfSigned makes a certificate for the names the Service may be reached by.
func selfSigned() (crtPEM, keyPEM []byte, err error) {
	host, _ := os.Hostname()
	crtPEM, keyPEM, err = certutil.GenerateSelfSignedCertKey("koord-queue-visibility-server",
		[]net.IP{net.ParseIP("127.0.0.1")},
		[]string{"localhost", host, "koord-queue-visibility-server", "koord-queue-visibility-server.koord-queue.svc"})
	if err != nil {
		return nil, nil, fmt.Errorf("self-signed certificate: %w", err)
	}
	return crtPEM, keyPEM, nil
}

// withMaxInFlight answers 429 with Retry-After, as kube-apiserver does, to
// the requests beyond limit at once; health probes are never refused. (The
// apiserver's own filter would bring its storage packages and etcd's client
// into the module.)
func withMaxInFlight(next http.Handler, limit int) http.Handler {
	slots := make(chan struct{}, limit)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if alwaysAllowPaths[r.URL.Path] {
			next.ServeHTTP(w, r)
			return
		}
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
			next.ServeHTTP(w, r)
		default:
			w.Header().Set("Retry-After", "1")
			writeStatus(w, apierrors.NewTooManyRequests("too many requests at once, try again later", 1))
		}
	})
}
