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

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// binaries are the images this project publishes, with the ports their
// processes listen on (as in the chart's defaults).
var binaries = map[string]binarySpec{
	"koord-queue":             {Name: "koord-queue", Ports: []int{10259}},
	"koord-queue-controllers": {Name: "koord-queue-controllers", Ports: []int{8080, 8081}},
}

// options are the command line of imagebuild.
type options struct {
	root, output    string
	binaries        []string
	platforms       []platform
	tag             string
	meta            metadata
	push            bool
	prefix          string
	sourceDateEpoch string
}

func main() {
	o, err := parseFlags(os.Args[1:], os.Getenv)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "imagebuild:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if o.push {
		err = push(ctx, o)
	} else {
		err = build(ctx, o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "imagebuild:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string, getenv func(string) string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("imagebuild", flag.ContinueOnError)
	fs.StringVar(&o.root, "root", ".", "Root of the koord-queue repository.")
	fs.StringVar(&o.output, "output", "_output/images", "Folder of the OCI image layouts, one <binary> folder each.")
	bins := fs.String("binaries", "koord-queue,koord-queue-controllers", "Comma list of the images to build or push.")
	plats := fs.String("platforms", "linux/amd64,linux/arm64", "Comma list of the platforms of every image.")
	fs.StringVar(&o.tag, "tag", "", "Tag of the images (the chart's appVersion by default in the Makefile).")
	fs.StringVar(&o.meta.Version, "version", "", "Version the binaries report and label org.opencontainers.image.version (git describe).")
	fs.StringVar(&o.meta.Revision, "revision", "", "Commit of the source (label org.opencontainers.image.revision).")
	fs.StringVar(&o.meta.Source, "source", "https://github.com/koordinator-sh/koord-queue", "Label org.opencontainers.image.source.")
	fs.StringVar(&o.sourceDateEpoch, "source-date-epoch", getenv("SOURCE_DATE_EPOCH"), "Seconds since the epoch of every file time and of the images' creation (the commit time); default $SOURCE_DATE_EPOCH.")
	fs.BoolVar(&o.push, "push", false, "Push the layouts already under --output to <image-prefix>/<binary>:<tag> instead of building.")
	fs.StringVar(&o.prefix, "image-prefix", "", "With --push: the registry and repository prefix, such as registry.example/team.")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.tag == "" {
		return nil, errors.New("--tag is required")
	}
	for _, b := range splitList(*bins) {
		if _, ok := binaries[b]; !ok {
			return nil, fmt.Errorf("--binaries: unknown binary %q", b)
		}
		o.binaries = append(o.binaries, b)
	}
	if len(o.binaries) == 0 {
		return nil, errors.New("--binaries names no binary")
	}
	if o.push {
		return o, validatePush(o)
	}
	for _, s := range splitList(*plats) {
		p, err := parsePlatform(s)
		if err != nil {
			return nil, fmt.Errorf("--platforms: %w", err)
		}
		o.platforms = append(o.platforms, p)
	}
	if len(o.platforms) == 0 {
		return nil, errors.New("--platforms names no platform")
	}
	if o.meta.Version == "" || o.meta.Revision == "" {
		return nil, errors.New("--version and --revision are required")
	}
	epoch, err := strconv.ParseInt(o.sourceDateEpoch, 10, 64)
	if err != nil || epoch < 0 {
		return nil, fmt.Errorf("--source-date-epoch (or SOURCE_DATE_EPOCH) %q: want the commit time in seconds since the epoch", o.sourceDateEpoch)
	}
	o.meta.Created = time.Unix(epoch, 0).UTC()
	return o, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// build compiles every platform's binaries once, then writes one layout per
// binary and prints its index digest.
func build(ctx context.Context, o *options) error {
	root, err := filepath.Abs(o.root)
	if err != nil {
		return err
	}
	output := o.output
	if !filepath.IsAbs(output) {
		output = filepath.Join(root, output)
	}
	work, err := os.MkdirTemp("", "imagebuild-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(work) }()

	base, err := layer(baseEntries(), o.meta.Created)
	if err != nil {
		return fmt.Errorf("base layer: %w", err)
	}
	images := map[string][]platformImage{}
	for _, p := range o.platforms {
		dir := filepath.Join(work, p.OS+"_"+p.Arch)
		start := time.Now()
		if err := goBuild(ctx, root, dir, p, o.binaries, o.meta.Version, o.meta.Revision); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "imagebuild: built %s for %s in %s\n", strings.Join(o.binaries, ", "), p, time.Since(start).Round(time.Second))
		for _, b := range o.binaries {
			data, err := os.ReadFile(filepath.Join(dir, b))
			if err != nil {
				return err
			}
			img, err := buildImage(binaries[b], p, base, data, o.meta)
			if err != nil {
				return fmt.Errorf("image %s for %s: %w", b, p, err)
			}
			images[b] = append(images[b], platformImage{platform: p, image: img})
		}
	}
	// digests.txt says what was built, for `make test-images` and for
	// comparing two builds.
	var digests strings.Builder
	for _, b := range o.binaries {
		dir := filepath.Join(output, b)
		digest, err := writeLayout(dir, buildIndex(binaries[b], images[b], o.meta), o.tag)
		if err != nil {
			return err
		}
		fmt.Fprintf(&digests, "%s:%s %s version=%s revision=%s\n", b, o.tag, digest, o.meta.Version, o.meta.Revision)
	}
	fmt.Print(digests.String())
	return os.WriteFile(filepath.Join(output, "digests.txt"), []byte(digests.String()), 0o644)
}
