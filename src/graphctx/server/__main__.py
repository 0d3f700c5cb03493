from graphctx.server.cli import main

raise SystemExit(main())
