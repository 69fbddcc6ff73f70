/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* diagnose_group.c -- where the error enters, from what fails together
   (manual: "Diagnosis", "Where the error enters"): the order in which the
   failing tensors are named, the tensors that fail alike read as one
   group, and the step at which the failures start, along a tensor's axis
   or over blocks numbered by step.  Only what the data shows is said: the
   model declares no data flow, so an axis is read as the step only in
   words that say so.  */

#include "diagnose/diagnose-internal.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
gc__diag_append (gc_diagnosis *dg, const char *fmt, ...)
{
  size_t l = strlen (dg->text);
  if (l + 1 >= sizeof dg->text)
    return;
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (dg->text + l, sizeof dg->text - l, fmt, ap);
  va_end (ap);
}

#define append gc__diag_append

/* The order in which the failing tensors are named (manual: "Diagnosis"):
   the largest share of checked elements failing first (a tensor that
   fails wholly is nearer the bug than one that fails in part), then the
   latest in the model's block order, read as forward order: a bug
   corrupts the gradients of every tensor the forward uses before it, so
   among tensors that fail alike the last one used is nearest the bug (the
   first whose gradient the backward gets wrong).  A GELU derivative's bug
   fails gamma, beta, W1 and b1 wholly: b1 is named first, beside the
   passing W2 and b2.  Where several fail wholly the report names them as
   one group (gc__diag_other_tensors) and this order only picks the
   tensor whose failures the patterns read.  */
int
gc__lead_before (const gc__tensor *a, const gc__tensor *b)
{
  /* failed / checked, compared without rounding */
  double sa = (double) a->failed * (double) b->checked;
  double sb = (double) b->failed * (double) a->checked;
  if (sa != sb)
    return sa > sb;
  return a->block > b->block;
}

/* ---------------------------------------------------------------------- */
/* The step where the failures start (manual: "Where the error enters").  */

/* Write "the error enters at step t (...)" for the states S[0..n) (2 the
   step fails, 1 it passes, 0 unknown) when they split cleanly: steps
   0..t fail and t+1..n-1 pass (a backward run from the last step down
   goes wrong at step t: every earlier step inherits it), or 0..t-1 pass
   and t..n-1 fail (failures from step t to the last).  False otherwise.
   HOW ends the parenthesis: what was read as the step.  */
static bool
step_split (const unsigned char *s, size_t n, const char *how, char *out,
            size_t size)
{
  if (n < 3)
    return false;
  size_t nf = 0;
  for (size_t j = 0; j < n; j++)
    {
      if (!s[j])
        return false;
      nf += s[j] == 2;
    }
  if (!nf || nf == n)
    return false;
  bool prefix = true, suffix = true;
  for (size_t j = 0; j < n; j++)
    {
      prefix = prefix && (s[j] == 2) == (j < nf);
      suffix = suffix && (s[j] == 2) == (j >= n - nf);
    }
  /* "steps a..b", or "step a" for one */
  char f[48], p[48];
  size_t f0 = prefix ? 0 : n - nf, f1 = prefix ? nf - 1 : n - 1;
  size_t p0 = prefix ? nf : 0, p1 = prefix ? n - 1 : n - nf - 1;
  if (f0 == f1)
    snprintf (f, sizeof f, "step %zu", f0);
  else
    snprintf (f, sizeof f, "steps %zu..%zu", f0, f1);
  if (p0 == p1)
    snprintf (p, sizeof p, "step %zu", p0);
  else
    snprintf (p, sizeof p, "steps %zu..%zu", p0, p1);
  if (prefix)
    snprintf (out, size, "the error enters at step %zu (inputs of %s fail, "
              "of %s pass; %s)", f1, f, p, how);
  else if (suffix)
    snprintf (out, size, "the failures start at step %zu and run to the "
              "last (inputs of %s fail, of %s pass; %s): the error enters "
              "there if the backward runs from step 0 up", f0, f, p, how);
  return prefix || suffix;
}

/* The stem of a block name numbered by step ("x3", "x_3", "x[3]"): its
   length in *STEM and the number in *NUM; false without one.  */
static bool
numbered (const char *name, size_t *stem, unsigned long *num)
{
  size_t l = name ? strlen (name) : 0;
  if (l && name[l - 1] == ']')
    l--;
  size_t e = l;
  while (l && isdigit ((unsigned char) name[l - 1]))
    l--;
  if (l == e || !l || e - l > 6)
    return false;
  *stem = l;
  *num = strtoul (name + l, NULL, 10);
  return true;
}

/* Blocks numbered by step: the longest run of at least 3 consecutive
   tensors named by one stem and consecutive numbers, of one size, each
   failing or passing.  */
static bool
step_blocks (const gc__tensor *t, size_t nt, char *out, size_t size)
{
  for (size_t k = 0; k + 2 < nt; k++)
    {
      size_t stem, run = 1;
      unsigned long n0, n;
      if (!numbered (t[k].name, &stem, &n0))
        continue;
      for (size_t s; k + run < nt && numbered (t[k + run].name, &s, &n)
                     && s == stem && !strncmp (t[k].name, t[k + run].name,
                                               stem)
                     && n == n0 + run;)
        run++;
      if (run < 3)
        continue;
      unsigned char st[64];
      if (run > sizeof st)
        run = sizeof st;
      for (size_t j = 0; j < run; j++)
        st[j] = !t[k + j].checked ? 0 : t[k + j].failed ? 2 : 1;
      char how[160];
      snprintf (how, sizeof how, "blocks %s .. %s, one per step",
                t[k].name, t[k + run - 1].name);
      if (step_split (st, run, how, out, size))
        return true;
      k += run - 1;
    }
  return false;
}

/* Along an axis of tensor T (block B of R, coordinates): each index fails
   (a failure), passes (none, and a pass resolving an error of the
   failures' size: tensors.c's rule) or is unknown.  */
static bool
step_axis (const gc_result *r, const gc__tensor *t, char *out, size_t size)
{
  const gc_block *b = &r->blocks[t->block];
  size_t nd = b->ndim ? b->ndim : 1;
  for (size_t a = 0; a < nd; a++)
    {
      size_t dim = b->ndim ? b->shape[a] : b->count, inner = 1;
      if (dim < 3 || dim > 4096)
        continue;
      for (size_t i = a + 1; i < nd; i++)
        inner *= b->shape[i];
      unsigned char *st = calloc (dim, 1);
      if (!st)
        return false;
      for (size_t k = 0; k < r->n_directions; k++)
        {
          const gc_direction *d = &r->dirs[k];
          if (d->index == SIZE_MAX || d->index < b->offset
              || d->index - b->offset >= b->count)
            continue;
          size_t j = (d->index - b->offset) / inner % dim;
          if (d->verdict == GC_FAIL)
            st[j] = 2;
          else if (d->verdict == GC_PASS && st[j] != 2
                   && fabs (d->resolution) <= t->rel_error / 2)
            st[j] = 1;
        }
      char how[160];
      snprintf (how, sizeof how, "axis %zu of %s read as the step", a,
                t->name);
      bool ok = step_split (st, dim, how, out, size);
      free (st);
      if (ok)
        return true;
    }
  return false;
}

bool
gc__diag_step_line (const gc_result *r, const gc__tensor *t, size_t nt,
                    bool axes, char *out, size_t size)
{
  if (r->direction_kind == GC_DIR_RANDOM && !r->random_per_block)
    return false;
  if (step_blocks (t, nt, out, size))
    return true;
  if (!axes || r->direction_kind == GC_DIR_RANDOM)
    return false;
  for (size_t k = 0; k < nt; k++)
    if (t[k].block != SIZE_MAX && t[k].failed && t[k].failed < t[k].checked
        && step_axis (r, &t[k], out, size))
      return true;
  return false;
}

/* ---------------------------------------------------------------------- */
/* The tensors other than the diagnosed one.  */

/* The last of the tensors from K on that fail wholly and are numbered
   by step with K's stem and size (x0 .. x5), or K.  */
static size_t
numbered_run (const gc__tensor *t, size_t nt, size_t k)
{
  size_t stem, s, e = k;
  unsigned long n0, n;
  if (!numbered (t[k].name, &stem, &n0))
    return k;
  while (e + 1 < nt && numbered (t[e + 1].name, &s, &n) && s == stem
         && !strncmp (t[k].name, t[e + 1].name, stem)
         && n == n0 + (e + 1 - k) && t[e + 1].checked == t[k].checked
         && t[e + 1].failed == t[e + 1].checked)
    e++;
  return e;
}

/* Tensors failing wholly alike with the diagnosed one D (issue 36): one
   group, said right after the finding's kind (the text's first ": "),
   none named as nearer the bug; then where the error enters (the step
   line, else the tensors failing in part with their structure); the
   finding read on D after that; the passing tensors last.  */
static void
group (gc_diagnosis *dg, const gc_result *r, const gc__tensor *t, size_t nt,
       size_t d)
{
  char rest[sizeof dg->text];
  const char *colon = strstr (dg->text, ": ");
  size_t head = colon && colon - dg->text < 40
                ? (size_t) (colon - dg->text) + 2 : 0;
  snprintf (rest, sizeof rest, "%s", dg->text + head);
  dg->text[head] = '\0';
  size_t nwhole = 0, npart = 0, npass = 0;
  for (size_t k = 0; k < nt; k++)
    if (t[k].checked)
      {
        nwhole += t[k].failed == t[k].checked;
        npart += t[k].failed && t[k].failed < t[k].checked;
        npass += !t[k].failed;
      }
  append (dg, "%zu tensors fail alike, wholly:", nwhole);
  size_t shown = 0;
  for (size_t k = 0; k < nt; k++)
    if (t[k].checked && t[k].failed == t[k].checked)
      {
        size_t e = numbered_run (t, nt, k);
        if (e > k + 1)
          {
            append (dg, "%s %s .. %s (%zu/%zu each)", shown++ ? "," : "",
                    t[k].name, t[e].name, t[k].failed, t[k].checked);
            k = e;
            continue;
          }
        append (dg, "%s %s (%zu/%zu)", shown++ ? "," : "", t[k].name,
                t[k].failed, t[k].checked);
      }
  /* rounding is no one error: the group is said, not its cause */
  if (dg->kind != GC_DIAG_ONE_ULP && dg->kind != GC_DIAG_ROUNDING_SUSPECTED)
    append (dg, " -- one error reaches them all (a shared weight, a common "
            "upstream gradient): none is nearer it than another");
  char step[240];
  bool located = gc__diag_step_line (r, t, nt, true, step, sizeof step);
  if (located)
    append (dg, "; %s", step);
  else if (!npart && !npass)
    append (dg, "; every tensor fails: the failures do not say where it "
            "enters");
  append (dg, "; read on %s: %s", t[d].name, rest);
  if (npart)
    {
      append (dg, located ? "; in part:"
                          : "; in part, where the error enters:");
      shown = 0;
      for (size_t k = 0; k < nt; k++)
        if (t[k].checked && t[k].failed && t[k].failed < t[k].checked)
          {
            if (strlen (dg->text) + strlen (t[k].structure) + 48
                >= sizeof dg->text)
              {
                append (dg, " ...");
                return;
              }
            append (dg, "%s %s (%zu/%zu%s%s)", shown++ ? ";" : "",
                    t[k].name, t[k].failed, t[k].checked,
                    t[k].structure[0] ? ": " : "", t[k].structure);
          }
    }
  if (!npass)
    return;
  append (dg, "; %s:", npass == 1 ? "passes" : "pass");
  shown = 0;
  for (size_t k = 0; k < nt; k++)
    if (t[k].checked && !t[k].failed)
      {
        if (strlen (dg->text) + strlen (t[k].name) + 8 >= sizeof dg->text)
          {
            append (dg, " ...");
            return;
          }
        append (dg, "%s %s", shown++ ? "," : "", t[k].name);
      }
}

/* The failing tensors other than the diagnosed one in lead order, and
   the passing ones, by name, as far as they fit; tensors failing wholly
   alike with it as one group (group above).  */
void
gc__diag_other_tensors (gc_diagnosis *dg, const gc_result *r,
                        const gc__tensor *t, size_t nt, size_t diagnosed)
{
  size_t nfail = 0, npass = 0, nwhole = 0;
  bool whole = t[diagnosed].failed == t[diagnosed].checked;
  for (size_t k = 0; k < nt; k++)
    if (k != diagnosed && t[k].checked)
      {
        nfail += t[k].failed > 0;
        npass += t[k].failed == 0;
        nwhole += whole && t[k].failed == t[k].checked;
      }
  if (nwhole)
    {
      group (dg, r, t, nt, diagnosed);
      return;
    }
  if (t[diagnosed].structure[0] && dg->kind != GC_DIAG_ONE_ULP)
    append (dg, "; %s", t[diagnosed].structure);
  char step[240];
  if (nfail && gc__diag_step_line (r, t, nt, false, step, sizeof step))
    append (dg, "; %s", step);
  if (!nfail)
    {
      if (npass)
        append (dg, "; every other tensor passes");
      return;
    }
  append (dg, "; %s", nfail == 1 ? "one other tensor fails too, a weaker "
          "lead (less complete, or earlier in block order):"
          : "others fail too, weaker leads in order (less complete, or "
            "earlier in block order):");
  /* the failing ones in lead order: a selection by rank, nt is small */
  unsigned char *named = calloc (nt ? nt : 1, 1);
  size_t shown = 0;
  bool cut = false;
  for (size_t n = 0; n < nfail && !cut; n++)
    {
      /* without memory for the marks, block order: the n-th failing */
      size_t best = SIZE_MAX, seen = 0;
      for (size_t k = 0; k < nt; k++)
        if (k != diagnosed && t[k].checked && t[k].failed
            && (named ? !named[k]
                        && (best == SIZE_MAX
                            || gc__lead_before (&t[k], &t[best]))
                      : seen++ == n))
          best = k;
      if (best == SIZE_MAX)
        break;
      if (named)
        named[best] = 1;
      char item[96];
      snprintf (item, sizeof item, "%s %s (%zu/%zu)", shown ? "," : "",
                t[best].name, t[best].failed, t[best].checked);
      if (strlen (dg->text) + strlen (item) + 16 >= sizeof dg->text)
        {
          append (dg, " ...");
          cut = true;
          break;
        }
      append (dg, "%s", item);
      shown++;
    }
  free (named);
  if (!npass || cut)
    return;
  append (dg, "; %s:", npass == 1 ? "passes" : "pass");
  shown = 0;
  for (size_t k = 0; k < nt; k++)
    {
      if (k == diagnosed || !t[k].checked || t[k].failed)
        continue;
      char item[96];
      snprintf (item, sizeof item, "%s %s", shown ? "," : "", t[k].name);
      if (strlen (dg->text) + strlen (item) + 16 >= sizeof dg->text)
        {
          append (dg, " ...");
          break;
        }
      append (dg, "%s", item);
      shown++;
    }
}
