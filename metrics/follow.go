package metrics

import "github.com/prometheus/client_golang/prometheus"

// followCollectors are the collectors of a node that follows published
// generations: how far behind the newest it is, what it downloaded, when
// the metastore or the object store failed it, and how often the
// metastore told it of a publication at once.
type followCollectors struct {
	behind     prometheus.Gauge
	downloaded prometheus.Counter
	installs   prometheus.Counter
	failures   *prometheus.CounterVec
	damaged    prometheus.Gauge
	heard      prometheus.Counter
}

// Steps of following that can fail, the label of follow_failures_total.
const (
	FollowMetastore = "metastore"
	FollowDownload  = "download"
	FollowInstall   = "install"
	FollowHeartbeat = "heartbeat"
	// FollowDamaged: a published generation found damaged (an object
	// that differs from its manifest, a manifest or a store that does not
	// check); the node backs off before it fetches it again.
	FollowDamaged = "damaged"
)

func (m *Registry) registerFollow() {
	f := &m.follow
	f.behind = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace, Name: "index_generations_behind",
		Help: "Published generations newer than the one this node serves (0: it serves the newest; it keeps serving and stays ready while behind).",
	})
	f.downloaded = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Name: "index_download_bytes_total",
		Help: "Bytes of published generations this node downloaded from the object store.",
	})
	f.installs = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Name: "index_installs_total",
		Help: "Published generations this node downloaded, verified and installed.",
	})
	f.failures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "index_follow_failures_total",
		Help: "Failed steps of following published generations, by step: metastore (reading the published generations), download (the object store down, slow, or an object damaged), install (a downloaded generation refused), heartbeat, damaged (a published generation found damaged, fetched again only after a backoff).",
	}, []string{"step"})
	for _, s := range []string{FollowMetastore, FollowDownload, FollowInstall, FollowHeartbeat, FollowDamaged} {
		f.failures.WithLabelValues(s)
	}
	f.damaged = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace, Name: "index_damaged_generations",
		Help: "Published generations this node found damaged and backs off from (it serves what it has; companydocs nodes says which and why).",
	})
	f.heard = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Name: "index_publications_heard_total",
		Help: "Live publications the metastore told this node of at once (PostgreSQL NOTIFY, and the newest live one whenever its listening connection starts), each waking the follow loop before its interval.",
	})
	m.Prometheus.MustRegister(f.behind, f.downloaded, f.installs, f.failures, f.damaged, f.heard)
}

// SetGenerationsBehind sets how many published generations are newer
// than the one served.
func (m *Registry) SetGenerationsBehind(n int) {
	if m == nil {
		return
	}
	m.follow.behind.Set(float64(n))
}

// AddDownloaded counts bytes downloaded from the object store.
func (m *Registry) AddDownloaded(n int64) {
	if m == nil {
		return
	}
	m.follow.downloaded.Add(float64(n))
}

// ObserveInstall counts a published generation installed.
func (m *Registry) ObserveInstall() {
	if m == nil {
		return
	}
	m.follow.installs.Inc()
}

// ObservePublicationHeard counts a live publication the metastore told
// of at once.
func (m *Registry) ObservePublicationHeard() {
	if m == nil {
		return
	}
	m.follow.heard.Inc()
}

// ObserveFollowFailure counts a failed step of following (Follow*).
func (m *Registry) ObserveFollowFailure(step string) {
	if m == nil {
		return
	}
	m.follow.failures.WithLabelValues(step).Inc()
}

// SetDamagedGenerations sets how many published generations this node
// found damaged and backs off from.
func (m *Registry) SetDamagedGenerations(n int) {
	if m == nil {
		return
	}
	m.follow.damaged.Set(float64(n))
}
