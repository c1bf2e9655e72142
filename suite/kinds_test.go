package suite

import _ "github.com/msrag/msrag/channels" // the kinds of channel the plans' configurations fuse
