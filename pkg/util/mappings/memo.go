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

package mappings

import (
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Memo is a RESTMapper that keeps the mappings its delegate found, for
// questions of one kind in at most one version. Every other question, and
// every error, goes to the delegate each time, so a kind not served yet is
// found once it is.
type Memo struct {
	meta.RESTMapper
	found sync.Map // key -> *meta.RESTMapping
}

type key struct {
	gk      schema.GroupKind
	version string
}

// Provider is a manager's MapperProvider: controller-runtime's dynamic
// mapper behind a Memo.
func Provider(cfg *rest.Config, httpClient *http.Client) (meta.RESTMapper, error) {
	m, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	return NewMemo(m), nil
}

// NewMemo returns a Memo in front of m. The mappings it keeps are shared
// by every caller, which only read them.
func NewMemo(m meta.RESTMapper) *Memo { return &Memo{RESTMapper: m} }

// RESTMapping implements meta.RESTMapper.
func (m *Memo) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if len(versions) > 1 {
		return m.RESTMapper.RESTMapping(gk, versions...)
	}
	k := key{gk: gk}
	if len(versions) == 1 {
		k.version = versions[0]
	}
	if v, ok := m.found.Load(k); ok {
		return v.(*meta.RESTMapping), nil
	}
	mapping, err := m.RESTMapper.RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	m.found.Store(k, mapping)
	return mapping, nil
}
