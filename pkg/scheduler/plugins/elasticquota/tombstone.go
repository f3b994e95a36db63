package elasticquota

import toolscache "k8s.io/client-go/tools/cache"

type cacheTombstone = toolscache.DeletedFinalStateUnknown
