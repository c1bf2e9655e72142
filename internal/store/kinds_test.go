package store

import _ "github.com/msrag/msrag/channels" // the kinds the manifests of these tests record
