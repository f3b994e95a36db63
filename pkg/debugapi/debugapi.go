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

package debugapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Source is what the debug API reads.
type Source interface {
	// Quotas lists every quota with its usage, parents before children.
	Quotas() []Quota
	// Queues lists every queue's settings and pending count, in serving order.
	Queues() []Queue
	// Orphans lists, by missing queue name, the units waiting for it.
	Orphans() map[string][]string
	// Queue returns one queue with its pending units; false when it does not exist.
	Queue(ctx context.Context, name string) (Queue, bool)
}

// Quota is one node of the quota tree.
type Quota struct {
	Name   string `json:"name"`
	Parent string `json:"parent,omitempty"`
	// Exists is false for a placeholder: a parent named by a child but not created.
	Exists   bool                `json:"exists"`
	Min      corev1.ResourceList `json:"min,omitempty"`
	Max      corev1.ResourceList `json:"max,omitempty"`
	Used     corev1.ResourceList `json:"used,omitempty"`
	Children []string            `json:"children,omitempty"`
}

// Queue is one queue's settings and what waits in it.
type Queue struct {
	Name               string `json:"name"`
	Policy             string `json:"policy"`
	Priority           int32  `json:"priority"`
	PriorityThreshold  int32  `json:"priorityThreshold"`
	MaxDepth           int    `json:"maxDepth,omitempty"`
	WaitForPodsRunning bool   `json:"waitForPodsRunning,omitempty"`
	PendingCount       int    `json:"pendingCount"`
	// Pending is filled for /debug/queues/{name} only.
	Pending []Unit `json:"pending,omitempty"`
}

// Unit is one pending unit.
type Unit struct {
	Position  int                 `json:"position"`
	Namespace string              `json:"namespace"`
	Name      string              `json:"name"`
	Priority  int32               `json:"priority"`
	Quota     string              `json:"quota,omitempty"`
	Cohort    string              `json:"cohort,omitempty"`
	Request   corev1.ResourceList `json:"request,omitempty"`
	Created   time.Time           `json:"created"`
	Enqueued  time.Time           `json:"enqueued"`
	Message   string              `json:"message,omitempty"`
}

// NewHandler serves the debug endpoints from src.
func NewHandler(src Source) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/quotas", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"quotas": src.Quotas()})
	})
	mux.HandleFunc("GET /debug/queues", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"queues": src.Queues(), "orphans": src.Orphans()})
	})
	mux.HandleFunc("GET /debug/queues/{name}", func(w http.ResponseWriter, r *http.Request) {
		q, ok := src.Queue(r.Context(), r.PathValue("name"))
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("queue %q not found", r.PathValue("name"))})
			return
		}
		writeJSON(w, http.StatusOK, q)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]any{
			"error": "not found", "paths": []string{"/debug/quotas", "/debug/queues", "/debug/queues/{name}"},
		})
	})
	return mux
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(data, '\n'))
}

// Server serves the debug API over plain HTTP on every replica.
type Server struct {
	addr string
	src  Source
}

var (
	_ manager.Runnable               = (*Server)(nil)
	_ manager.LeaderElectionRunnable = (*Server)(nil)
)

// NewServer serves src on addr (host:port; keep it on loopback).
func NewServer(addr string, src Source) *Server { return &Server{addr: addr, src: src} }

// NeedLeaderElection is false: every replica can be asked about itself.
func (s *Server) NeedLeaderElection() bool { return false }

// Start serves until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("debug API: %w", err)
	}
	srv := &http.Server{Handler: NewHandler(s.src), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	klog.FromContext(ctx).Info("Serving the debug API", "address", ln.Addr().String())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("debug API: %w", err)
	}
	return nil
}
