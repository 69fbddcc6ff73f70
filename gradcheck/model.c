/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* model.c -- the model a subcommand checks: a built-in model's instance,
   or the description a plugin exports  */

#include "config.h"

#include "cli.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------------- */
/* Models: built-in or from a plugin.  */

/* FNV-1a (64-bit), as the library's identity digests: it tells apart the
   files and arguments of checks run in good faith, not a forger.  */
static uint64_t
fnv1a (uint64_t h, const void *p, size_t n)
{
  const unsigned char *c = p;
  for (size_t k = 0; k < n; k++)
    {
      h ^= c[k];
      h *= 0x100000001b3u;
    }
  return h;
}

/* The digest of the bytes of the file at PATH into *OUT; false with errno
   set when it cannot be read.  */
static bool
file_digest (const char *path, uint64_t *out)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  uint64_t h = 0xcbf29ce484222325u;
  char buf[65536];
  for (;;)
    {
      ssize_t got = read (fd, buf, sizeof buf);
      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0)
        {
          int err = errno;
          close (fd);
          errno = err;
          return false;
        }
      if (got == 0)
        break;
      h = fnv1a (h, buf, (size_t) got);
    }
  close (fd);
  *out = h;
  return true;
}

static int
open_plugin (const cli_args *a, cli_model *cm)
{
  if (a->mutant)
    {
      usage_error ("--mutant applies to built-in models, not to plugins");
      return EXIT_USAGE;
    }
  /* A path without a slash would be searched for in the library path.  */
  char path[PATH_MAX];
  int plen = snprintf (path, sizeof path, "%s%s",
                       strchr (a->plugin, '/') ? "" : "./", a->plugin);
  if (plen < 0 || (size_t) plen >= sizeof path)
    {
      /* cut short, it would name another file  */
      fprintf (stderr, "%s: cannot load plugin %.40s...: %s (%zu characters;"
               " at most %d)\n", progname, a->plugin, strerror (ENAMETOOLONG),
               strlen (a->plugin), PATH_MAX - 3);
      return EXIT_USAGE;
    }
  /* The plugin's constructors are model code: an exit() there is caught
     (exit status 5) like one in a callback.  */
  cli_watch_begin (0);
  cm->dl = dlopen (path, RTLD_NOW | RTLD_LOCAL);
  if (!cm->dl)
    {
      cli_watch_end ();
      fprintf (stderr, "%s: cannot load plugin %s: %s\n", progname, a->plugin,
               dlerror ());
      return EXIT_USAGE;
    }
  gc_plugin_fn fn;
  *(void **) &fn = dlsym (cm->dl, GC_PLUGIN_SYMBOL);
  if (!fn)
    {
      cli_watch_end ();
      fprintf (stderr, "%s: plugin %s does not export %s\n", progname,
               a->plugin, GC_PLUGIN_SYMBOL);
      return EXIT_USAGE;
    }
  const gc_plugin *pl = fn (a->shape);
  cli_watch_end ();
  const char *why = cli_plugin_refusal (pl);
  if (why)
    {
      fprintf (stderr, "%s: plugin %s refused: %s\n", progname, a->plugin,
               why);
      return EXIT_USAGE;
    }
  /* The plugin file and its arguments select the model: both are part
     of the check's identity (the file as loaded; its bytes, read once
     more, name it).  */
  uint64_t file;
  if (!file_digest (path, &file))
    {
      fprintf (stderr, "%s: cannot read plugin %s: %s\n", progname,
               a->plugin, strerror (errno));
      return EXIT_USAGE;
    }
  const char *args = a->shape ? a->shape : "";
  snprintf (cm->identity, sizeof cm->identity, "plugin file %016" PRIx64
            " args %s%016" PRIx64, file, a->shape ? "" : "none ",
            fnv1a (0xcbf29ce484222325u, args, strlen (args) + 1));
  cm->model = pl->model;
  cm->x = pl->x;
  return -1;
}

int
cli_model_open (const cli_args *a, cli_model *cm)
{
  memset (cm, 0, sizeof *cm);
  if (a->plugin)
    return open_plugin (a, cm);
  const char *name = a->model ? a->model : gcm_default_name ();
  const gcm_spec *spec = gcm_find (name);
  if (!spec)
    {
      fprintf (stderr, "%s: unknown model '%s'; accepted:", progname, name);
      for (size_t i = 0; i < gcm_count (); i++)
        fprintf (stderr, " %s", gcm_get (i)->name);
      fprintf (stderr, " (or --plugin FILE.so)\n");
      return EXIT_USAGE;
    }
  long values[GCM_MAX_KEYS];
  char err[256];
  if (gcm_parse_shape (spec, a->shape, values, err, sizeof err) != GC_OK)
    {
      fprintf (stderr, "%s: %s\n", progname, err);
      return EXIT_USAGE;
    }
  int mutant = gcm_mutant_index (spec, a->mutant);
  if (mutant < 0)
    {
      fprintf (stderr, "%s: unknown mutant '%s' for model %s; accepted: none",
               progname, a->mutant, spec->name);
      for (size_t k = 0; k < spec->n_mutants; k++)
        fprintf (stderr, ", %s", spec->mutants[k].name);
      fprintf (stderr, "\n");
      return EXIT_USAGE;
    }
  gc_status st = gcm_create (spec, values, a->seed, mutant, &cm->inst);
  if (st != GC_OK)
    {
      fprintf (stderr, "%s: cannot build model %s at this shape: %s\n",
               progname, spec->name, st == GC_EINVAL
               ? "the shape keys contradict each other (see gradcheck list)"
               : gc_strerror (st));
      return st == GC_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
    }
  cm->model = &cm->inst->model;
  cm->x = cm->inst->x;
  /* every shape key's value (the defaults too, so that two spellings of
     one shape are one model); the mutant is in the model's name */
  size_t len = (size_t) snprintf (cm->identity, sizeof cm->identity,
                                  "built-in %s", spec->name);
  for (size_t k = 0; k < spec->n_keys && len < sizeof cm->identity; k++)
    len += (size_t) snprintf (cm->identity + len, sizeof cm->identity - len,
                              " %s=%ld", spec->keys[k].name, values[k]);
  return -1;
}

void
cli_model_close (cli_model *cm)
{
  gcm_destroy (cm->inst);
  /* A plugin's description lives until the process ends: no dlclose.  */
  cm->inst = NULL;
}
