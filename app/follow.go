package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"companydocs/index"
	"companydocs/objectstore"
	"companydocs/postgres/metastore"
	"companydocs/publication"
)

// followFlags declares the flags of a node that follows published
// generations.
func followFlags(fs *flagSet, c *Config) {
	fs.String(&c.IndexSource, "index-source", "", "object store to follow published index generations from (s3://bucket?prefix=companydocs/&endpoint=...&region=...&use_path_style=true, the prefix the index's own, or file:///shared/dir); needs --store postgres://..., the metastore; the node then starts on an empty data directory and never ingests")
	fs.Int64(&c.DownloadRate, "download-rate", 0, "bytes a second a following node downloads at most; 0 is unbounded")
	fs.Duration(&c.FollowInterval, "follow-interval", publication.DefaultFollowInterval, "how often a following node reports itself and asks the metastore for a newer published generation, which it hears of at once by PostgreSQL NOTIFY (this is the fallback); an object store that answers nothing for this long (at least 1s, at most 2m) fails the download")
	fs.String(&c.NodeName, "node-name", "", "the name a following node reports itself by in the metastore (companydocs nodes); empty is the host name and the data directory")
}

// validateFollow checks the follow flags (bad reports a usage error).
func (c *Config) validateFollow(bad badValue) {
	if c.IndexSource != "" && !postgresURL(c.Store) {
		bad("index-source", "needs --store postgres://..., the metastore of published generations")
	}
	if c.DownloadRate < 0 {
		bad("download-rate", "must be 0 (unbounded) or more, got %d", c.DownloadRate)
	}
	if c.FollowInterval <= 0 {
		bad("follow-interval", "must be longer than 0, got %s", c.FollowInterval)
	}
}

// startFollowing opens the object store and, on a data directory without
// a generation, waits until the newest published one is installed.
func (m *Main) startFollowing(ctx context.Context) error {
	objects, err := objectstore.Open(ctx, m.Config.IndexSource)
	if err != nil {
		return fmt.Errorf("open the index source (--index-source): %w", err)
	}
	objects.WithIdle(publication.FollowIdle(m.Config.FollowInterval)).WithLogger(m.Logger)
	m.followObjects = objects
	m.Follower = publication.NewFollower(publication.FollowerConfig{Meta: metastore.New(m.Database).WithLogger(m.Logger), Objects: objects,
		DataDir: m.Config.DataDir, Node: m.nodeName(), Rate: m.Config.DownloadRate, Interval: m.Config.FollowInterval,
		Keep: m.Config.Keep, Logger: m.Logger, Metrics: m.Metrics, Serving: m.ServingGeneration, ShareLimits: m.nodeShare.SetNodes})
	if _, err := index.ReadCurrent(m.Config.DataDir); errors.Is(err, index.ErrNoGeneration) {
		return m.Follower.First(ctx)
	} else if err != nil {
		return err
	}
	return nil
}

// ServingGeneration names the generation Live serves, "" before it opens.
func (m *Main) ServingGeneration() string {
	if m.Live == nil {
		return ""
	}
	id, _, _ := m.Live.Current()
	return id
}

// nodeName is --node-name, or the host name and the data directory.
func (m *Main) nodeName() string {
	if m.Config.NodeName != "" {
		return m.Config.NodeName
	}
	host, _ := os.Hostname()
	dir, err := filepath.Abs(m.Config.DataDir)
	if err != nil {
		dir = m.Config.DataDir
	}
	return host + ":" + dir
}
