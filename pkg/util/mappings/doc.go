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

// Package mappings owns a memo of REST mappings in front of a RESTMapper.
//
// controller-runtime's clients ask their RESTMapper for the mapping of an
// object's kind on every request made through the metadata and
// unstructured clients. Its dynamic mapper answers through a chain of
// generic mappers that allocate on each call. A kind's mapping does not
// change while a process runs, so the first answer found is kept.
package mappings
