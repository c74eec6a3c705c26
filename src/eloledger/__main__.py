from eloledger.cli import main

raise SystemExit(main())
