/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* cmd_higher.c -- gradcheck jvp, hvp and taylor (manual: "Beyond the
   gradient"), and which checks a built-in model supports.  */

#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool
cli_is_higher (const char *cmd)
{
  return !strcmp (cmd, "jvp") || !strcmp (cmd, "hvp")
         || !strcmp (cmd, "taylor");
}

gc_status
cli_higher_check (const char *cmd, const gc_model *m, const float *x,
                  const gc_options *o, gc_result **r)
{
  if (!strcmp (cmd, "jvp"))
    return gc_jvp_check (m, x, o, r);
  if (!strcmp (cmd, "hvp"))
    return gc_hvp_check (m, x, o, r);
  return gc_check (m, x, o, r);
}

int
cli_taylor (const cli_args *a, const cli_model *cm)
{
  /* one direction: a --directions that names more (all, several
     coordinates, K > 1 random ones) would be used in part only */
  const gc_options *o = &a->opts;
  if (a->dirs_set
      && (o->directions == GC_DIR_ALL || o->random_per_block
          || o->directions == GC_DIR_SCREEN
          || (o->directions == GC_DIR_LIST && o->n_indices != 1)
          || (o->directions == GC_DIR_RANDOM && o->n_random != 1)))
    {
      fprintf (stderr, "%s: taylor: the Taylor test is along one direction: "
               "--directions I (coordinate I) or random:1 (random direction "
               "0 of --seed)\n", progname);
      return EXIT_USAGE;
    }
  gc_taylor *t = NULL;
  gc_status st = gc_taylor_test (cm->model, cm->x, &a->opts, 0, &t);
  if (!t)
    {
      fprintf (stderr, "%s: %s\n", progname, gc_strerror (st));
      return st == GC_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
    }
  char *text = gc_taylor_report (t, a->format);
  if (!text)
    {
      free (t);
      fprintf (stderr, "%s: out of memory\n", progname);
      return EXIT_INTERNAL;
    }
  cli_note_write (fputs (text, stdout));
  free (text);
  if (st != GC_OK)
    fprintf (stderr, "%s: %s\n", progname, gc_strerror (st));
  /* manual: "Exit status": the worse of the two rate tests' exit
     statuses, gc_exit_status's (the HVP's where it was tested: its
     verdict is GC_ERROR without hvp_f32) */
  int rc = gc_exit_status (st, t->verdict);
  if (st != GC_OK || t->verdict_hvp != GC_ERROR)
    rc = cli_exit_worse (rc, gc_exit_status (st, t->verdict_hvp));
  free (t);
  return rc;
}

const char *
cli_model_checks (const gcm_spec *spec, char *buf, size_t size)
{
  long v[GCM_MAX_KEYS];
  for (size_t k = 0; k < spec->n_keys && k < GCM_MAX_KEYS; k++)
    v[k] = spec->keys[k].def;
  gcm_instance *in = NULL;
  if (gcm_create (spec, v, 1, 0, &in) != GC_OK)
    {
      snprintf (buf, size, "gradient");
      return buf;
    }
  const gc_model *m = &in->model;
  snprintf (buf, size, "gradient%s%s%s%s%s",
            m->grad_f64 ? " (with its f64 twin)" : "",
            m->outputs_f32 && m->outputs_mpfr ? ", oracle" : "",
            m->jvp_f32 ? ", jvp" : "", m->hvp_f32 ? ", hvp" : "",
            ", taylor");
  gcm_destroy (in);
  return buf;
}
