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

package kubectlplugin

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koordinator-sh/koord-queue/pkg/util/scheme"
)

// Values of --source.
const (
	sourceAuto       = "auto"
	sourceVisibility = "visibility"
	sourceObjects    = "objects"
)

// options are the flags every command shares.
type options struct {
	config        *genericclioptions.ConfigFlags
	allNamespaces bool
	source        string
	streams       genericiooptions.IOStreams
	now           func() time.Time
}

// NewCommand returns `kubectl koord-queue` with its subcommands.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &options{config: genericclioptions.NewConfigFlags(true), streams: streams, source: sourceAuto, now: time.Now} //nolint:forbidigo // the command is the root: it owns the clock
	root := &cobra.Command{
		Use:   "kubectl-koord_queue",
		Short: "Explain what koord-queue does with your jobs",
		Long: `kubectl koord-queue shows koord-queue's queues and units and explains why a job waits:
which quota and resource hold it back, the quota path with used/min/max at each
level, its position in its queue and the units ahead of it.

It reads the visibility API (visibility.koord-queue.x-k8s.io) when the cluster
serves it, for exact queue positions, and the QueueUnit, Queue and ElasticQuota
objects otherwise. Install it on your PATH as kubectl-koord_queue and call it
as "kubectl koord-queue".`,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl koord-queue"},
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	o.config.AddFlags(root.PersistentFlags())
	root.PersistentFlags().StringVar(&o.source, "source", o.source,
		"Where queue positions come from: auto (the visibility API when served, else the objects), visibility or objects.")
	root.AddCommand(o.listCommand(), o.whyCommand(), o.queuesCommand(), o.activeCommand(false), o.activeCommand(true),
		o.versionCommand())
	return root
}

// reader builds the API client and, unless --source=objects, the client of
// the visibility API, and returns them with the namespace of -n or the
// kubeconfig.
func (o *options) reader() (*Reader, string, error) {
	switch o.source {
	case sourceAuto, sourceVisibility, sourceObjects:
	default:
		return nil, "", fmt.Errorf("--source must be auto, visibility or objects, got %q", o.source)
	}
	cfg, err := o.config.ToRESTConfig()
	if err != nil {
		return nil, "", err
	}
	ns, _, err := o.config.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, "", err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return nil, "", err
	}
	r := &Reader{Client: c}
	if o.source != sourceObjects {
		// A follower's answers carry a warning (pkg/visibility); say it once,
		// as kubectl does, not once per queue.
		vcfg := rest.CopyConfig(cfg)
		vcfg.WarningHandler = rest.NewWarningWriter(o.streams.ErrOut, rest.WarningWriterOptions{Deduplicate: true})
		cs, err := kubernetes.NewForConfig(vcfg)
		if err != nil {
			return nil, "", err
		}
		r.Visibility = cs.Discovery().RESTClient()
	}
	return r, ns, nil
}

// snapshot reads the cluster for namespace ns ("" = all).
func (o *options) snapshot(ctx context.Context, r *Reader, ns string) (*Snapshot, error) {
	s, err := r.Gather(ctx, ns, o.now())
	if err != nil {
		return nil, err
	}
	if o.source == sourceVisibility && s.Source != SourceVisibility {
		if s.VisibilityDown != "" {
			return nil, fmt.Errorf("%s; or use --source=objects", s.VisibilityDown)
		}
		return nil, fmt.Errorf("the cluster does not serve the visibility API (APIService v1alpha1.visibility.koord-queue.x-k8s.io): start koord-queue with --enableVisibilityServer, or use --source=objects")
	}
	return s, nil
}

func (o *options) listCommand() *cobra.Command {
	out := newOutputFlags()
	var filter ListFilter
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List pending and admitted units with their queue, position and reason",
		Long: `List the QueueUnits of the namespace (or of all with -A) that are not finished:
pending ones first, in queue order with their position (counted over the whole
queue), then admitted ones. REASON is the unit's status.message: why it waits.
--queue, --quota and --phase keep the units of that queue, quota or phase.

With -o json, yaml, jsonpath or go-template it prints a QueueUnitsSummary of
the visibility API (visibility.koord-queue.x-k8s.io/v1alpha1).`,
		Example: `  kubectl koord-queue list
  kubectl koord-queue list -A -o wide
  kubectl koord-queue list --queue team-a --phase Enqueued
  kubectl koord-queue list -n team-a -o yaml
  kubectl koord-queue list -o jsonpath='{.items[*].metadata.name}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			if err := filter.validate(); err != nil {
				return err
			}
			r, ns, err := o.reader()
			if err != nil {
				return err
			}
			if o.allNamespaces {
				ns = ""
			}
			s, err := o.snapshot(cmd.Context(), r, ns)
			if err != nil {
				return err
			}
			rows := filter.Keep(ListView(s))
			if !out.table() {
				return out.printObject(o.streams.Out, ListObject(s, rows, filter.Phase))
			}
			if err := PrintNotes(o.streams.ErrOut, s.Notes); err != nil {
				return err
			}
			if len(rows) == 0 {
				where := "namespace " + ns
				if ns == "" {
					where = "any namespace"
				}
				_, err := fmt.Fprintf(o.streams.ErrOut, "No queue units found in %s.\n", where)
				return err
			}
			return PrintList(o.streams.Out, rows, out.wide(), o.allNamespaces)
		},
	}
	out.addFlags(cmd)
	cmd.Flags().BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "List the units of every namespace.")
	filter.addFlags(cmd)
	return cmd
}

func (o *options) whyCommand() *cobra.Command {
	out := newOutputFlags()
	cmd := &cobra.Command{
		Use:   "why (KIND/NAME | NAME)",
		Short: "Explain why a job or unit waits: reason, quota path, position, what is ahead",
		Long: `Explain one unit: its phase and reason (status.message), its quota and every
ancestor up to the root with used/min/max per resource (SHORT is what its
request lacks at that level), its position in its queue and the units ahead.

The argument is a job as KIND/NAME (job/NAME, tfjob/NAME, pytorchjob/NAME,
mpijob/NAME, rayjob/NAME, raycluster/NAME, sparkapplication/NAME, workflow/NAME,
jobset/NAME, trainjob/NAME, pod/NAME: a bare pod, or any member of a group of
pods, leaderworkerset/NAME or lws/NAME: the unit of its first group that waits),
a QueueUnit as qu/NAME, or a bare NAME: the unit of that name, else the unit of
the one job of that name.`,
		Example: `  kubectl koord-queue why job/train
  kubectl koord-queue why tfjob/mnist -n research
  kubectl koord-queue why train -o yaml`,
		Args: exactlyOne("why"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			r, ns, err := o.reader()
			if err != nil {
				return err
			}
			s, err := o.snapshot(cmd.Context(), r, ns)
			if err != nil {
				return err
			}
			u, err := Resolve(s.Units, ns, args[0])
			if err != nil {
				return err
			}
			x := Explain(s, u)
			if !out.table() {
				obj, err := ExplanationObject(x)
				if err != nil {
					return err
				}
				return out.printObject(o.streams.Out, obj)
			}
			return PrintExplanation(o.streams.Out, x)
		},
	}
	out.addFlags(cmd)
	return cmd
}

func (o *options) queuesCommand() *cobra.Command {
	out := newOutputFlags()
	cmd := &cobra.Command{
		Use:   "queues",
		Short: "List queues: policy, priority, pending, admitted, usage against min and max",
		Long: `List the queues koord-queue serves (namespace koord-queue) with their policy and
priority, how many units wait and how many are admitted, and the usage of the
quota of the same name as used/min/max per resource ("-" where none is set).`,
		Example: `  kubectl koord-queue queues
  kubectl koord-queue queues -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			r, ns, err := o.reader()
			if err != nil {
				return err
			}
			// Units of the current namespace name queues not yet created;
			// the usage counts every namespace the user may list.
			s, err := o.snapshot(cmd.Context(), r, ns)
			if err != nil {
				return err
			}
			rows := QueuesView(s)
			if !out.table() {
				obj, err := QueuesObject(rows)
				if err != nil {
					return err
				}
				return out.printObject(o.streams.Out, obj)
			}
			if err := PrintNotes(o.streams.ErrOut, s.Notes); err != nil {
				return err
			}
			return PrintQueues(o.streams.Out, rows)
		},
	}
	out.addFlags(cmd)
	return cmd
}

func exactlyOne(verb string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("%s takes one job or unit (KIND/NAME or NAME), got %d arguments", verb, len(args))
		}
		return nil
	}
}
