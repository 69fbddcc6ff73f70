/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* cmd_list.c -- gradcheck list: the built-in models, their shape keys and
   mutants  */

#include "config.h"

#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
list_models (void)
{
  for (size_t i = 0; i < gcm_count (); i++)
    {
      const gcm_spec *s = gcm_get (i);
      /* every write noted: the list outgrows stdio's buffer, and a
         failed write's reason would be lost (closeout.c) */
      cli_note_write (printf ("%s%s\n  %s\n  shape:", s->name,
                              strcmp (s->name, gcm_default_name ()) == 0
                              ? " (default)" : "", s->summary));
      for (size_t k = 0; k < s->n_keys; k++)
        cli_note_write (printf ("%s %s=%ld", k ? "," : "", s->keys[k].name,
                                s->keys[k].def));
      for (size_t k = 0; k < s->n_keys; k++)
        cli_note_write (printf ("\n    %-8s %s (%ld to %ld)",
                                s->keys[k].name, s->keys[k].help,
                                s->keys[k].min, s->keys[k].max));
      if (s->precisions)
        cli_note_write (printf ("\n  precisions: %s", s->precisions));
      cli_note_write (printf ("\n  mutants:"));
      if (s->n_mutants == 0)
        cli_note_write (printf (" none"));
      for (size_t k = 0; k < s->n_mutants; k++)
        cli_note_write (printf ("\n    %-22s %s", s->mutants[k].name,
                                s->mutants[k].help));
      char checks[128];
      cli_note_write (printf ("\n  checks: %s\n", cli_model_checks (s, checks,
                                                                sizeof checks)));
    }
  return EXIT_PASS;
}

int
cli_cmd_list (int argc, char **argv)
{
  cli_args a;
  int rc = cli_parse_plain (argc, argv, &a);
  if (rc >= 0)
    return rc;
  if (a.n_operands > 0)
    {
      usage_error ("unexpected argument '%s' to list", a.operands[0]);
      return EXIT_USAGE;
    }
  return list_models ();
}

