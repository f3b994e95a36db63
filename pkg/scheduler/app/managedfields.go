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

package app

// withoutManagedFields returns the JSON object data without the
// managedFields member of its metadata, or data itself when it has none or
// is not laid out as the API server writes an object. Managed fields are
// often half of a unit's JSON; the decoder would scan them twice (to check
// the document, then to step over them) to keep nothing. The bytes are
// read with a small scanner that only finds where values end; what is left
// is decoded and checked as before.
func withoutManagedFields(data []byte) []byte {
	from, to, ok := managedFieldsSpan(data)
	if !ok {
		return data
	}
	out := make([]byte, 0, len(data)-(to-from))
	out = append(out, data[:from]...)
	return append(out, data[to:]...)
}

// managedFieldsSpan finds the member "managedFields" of the object's member
// "metadata": [from, to) covers it and one comma next to it.
func managedFieldsSpan(data []byte) (from, to int, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return 0, 0, false
	}
	for i++; ; {
		key, _, next, ok := member(data, i)
		if !ok {
			return 0, 0, false
		}
		if key != "metadata" {
			end := skipValue(data, next)
			if end < 0 {
				return 0, 0, false
			}
			if i = afterComma(data, end); i < 0 {
				return 0, 0, false
			}
			continue
		}
		return metadataSpan(data, next)
	}
}

// metadataSpan is managedFieldsSpan inside the metadata object at i.
func metadataSpan(data []byte, i int) (from, to int, ok bool) {
	if i >= len(data) || data[i] != '{' {
		return 0, 0, false
	}
	prevComma := -1
	for i++; ; {
		key, start, next, ok := member(data, i)
		if !ok {
			return 0, 0, false
		}
		end := skipValue(data, next)
		if end < 0 {
			return 0, 0, false
		}
		after := skipSpace(data, end)
		if after >= len(data) {
			return 0, 0, false
		}
		if key == "managedFields" {
			switch {
			case data[after] == ',':
				return start, after + 1, true
			case prevComma >= 0:
				return prevComma, end, true
			default:
				return start, end, true
			}
		}
		if data[after] != ',' {
			// The end of the metadata: no managed fields.
			return 0, 0, false
		}
		prevComma, i = after, after+1
	}
}

// member reads the key of the object member at i (after skipping space):
// the key, where the member starts, and where its value starts. A key with
// an escape is not read (ok false): the API server writes none.
func member(data []byte, i int) (key string, start, value int, ok bool) {
	i = skipSpace(data, i)
	if i >= len(data) || data[i] != '"' {
		return "", 0, 0, false
	}
	start = i
	j := i + 1
	for j < len(data) && data[j] != '"' {
		if data[j] == '\\' {
			return "", 0, 0, false
		}
		j++
	}
	if j >= len(data) {
		return "", 0, 0, false
	}
	key = string(data[i+1 : j])
	j = skipSpace(data, j+1)
	if j >= len(data) || data[j] != ':' {
		return "", 0, 0, false
	}
	return key, start, skipSpace(data, j+1), true
}

// afterComma returns where the member after the value ending at i starts,
// or -1 when no comma follows.
func afterComma(data []byte, i int) int {
	i = skipSpace(data, i)
	if i >= len(data) || data[i] != ',' {
		return -1
	}
	return i + 1
}

// skipValue returns where the JSON value at i ends, or -1 when the data
// ends first. It does not check the value: the decoder does.
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				if j = skipString(data, j); j < 0 {
					return -1
				}
				j--
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		for j := i; j < len(data); j++ {
			switch data[j] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return j
			}
		}
		return -1
	}
}

// skipString returns where the string starting at i ends.
func skipString(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}
