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

package framework

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func TestNamespaceSelector(t *testing.T) {
	ns := func(name string, labels map[string]string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	cases := map[string]struct {
		expr, release string
		ns            *corev1.Namespace
		want          bool
		wantErr       bool
	}{
		"default takes a user namespace":   {release: "koord-queue", ns: ns("team-a", nil), want: true},
		"default leaves kube-system":       {release: "koord-queue", ns: ns("kube-system", nil)},
		"default leaves the release":       {release: "kq", ns: ns("kq", map[string]string{corev1.LabelMetadataName: "kq"})},
		"default without a release":        {ns: ns("koord-queue", nil), want: true},
		"custom selector matches":          {expr: "queue=on", release: "kq", ns: ns("team-a", map[string]string{"queue": "on"}), want: true},
		"custom selector does not match":   {expr: "queue=on", release: "kq", ns: ns("team-a", nil)},
		"custom selector replaces default": {expr: "queue=on", release: "kq", ns: ns("kube-system", map[string]string{"queue": "on"}), want: true},
		"set-based selector on the name":   {expr: corev1.LabelMetadataName + " in (a,b)", ns: ns("b", nil), want: true},
		"blank means the default":          {expr: "  ", release: "kq", ns: ns("kq", nil)},
		"bad selector":                     {expr: "team in (a", wantErr: true},
		"bad operator":                     {expr: "team=~a", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sel, err := ParseNamespaceSelector(tc.expr, tc.release)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if got := sel.Matches(tc.ns); got != tc.want {
				t.Errorf("Matches(%s %v) with %q = %v, want %v", tc.ns.Name, tc.ns.Labels, sel, got, tc.want)
			}
		})
	}
	if got, want := DefaultNamespaceSelector("kq").String(), "kubernetes.io/metadata.name notin (kq,kube-system)"; got != want {
		t.Errorf("default selector = %q, want %q", got, want)
	}
	if !(NamespaceSelector{}).Matches(ns("kube-system", nil)) {
		t.Error("zero selector does not match everything")
	}
}

// TestWebhookSelector checks the webhook's namespaceSelector selects what the
// --manage-all-jobs selector selects, never kube-system nor the release
// namespace, evaluated the way the API server does (LabelSelectorAsSelector
// over the namespace's labels).
func TestWebhookSelector(t *testing.T) {
	named := func(name string, extra map[string]string) labels.Set {
		set := labels.Set{corev1.LabelMetadataName: name}
		for k, v := range extra {
			set[k] = v
		}
		return set
	}
	cases := map[string]struct {
		expr     string
		selected []labels.Set
		left     []labels.Set
		wantErr  bool
	}{
		"default": {
			selected: []labels.Set{named("team-a", nil)},
			left:     []labels.Set{named("kube-system", nil), named("kq", nil)},
		},
		"custom selector, exclusions still hold": {
			expr:     "queue=on,tier!=gold,env,!legacy",
			selected: []labels.Set{named("team-a", map[string]string{"queue": "on", "env": "x"})},
			left: []labels.Set{
				named("team-b", map[string]string{"queue": "off", "env": "x"}),
				named("team-c", map[string]string{"queue": "on", "env": "x", "tier": "gold"}),
				named("team-d", map[string]string{"queue": "on"}),
				named("team-e", map[string]string{"queue": "on", "env": "x", "legacy": "y"}),
				named("kube-system", map[string]string{"queue": "on", "env": "x"}),
				named("kq", map[string]string{"queue": "on", "env": "x"}),
			},
		},
		"operator without a LabelSelector form": {expr: "size>3", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := ParseNamespaceSelector(tc.expr, "kq")
			if err != nil {
				t.Fatal(err)
			}
			ls, err := s.WebhookSelector("kq")
			if (err != nil) != tc.wantErr {
				t.Fatalf("WebhookSelector() error = %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			sel, err := metav1.LabelSelectorAsSelector(ls)
			if err != nil {
				t.Fatalf("selector %+v does not parse: %v", ls, err)
			}
			for _, set := range tc.selected {
				if !sel.Matches(set) {
					t.Errorf("%v not selected by %s", set, sel)
				}
			}
			for _, set := range tc.left {
				if sel.Matches(set) {
					t.Errorf("%v selected by %s", set, sel)
				}
			}
		})
	}
}
