//! Helpers shared by the derives: a struct's one lifetime, replacing it in
//! a field type, and tuples nested to the width doecs implements traits
//! for.

use proc_macro2::{Group, Spacing, Span, TokenStream, TokenTree};
use quote::{quote, ToTokens};
use syn::{GenericParam, Generics, Lifetime};

/// The generics' lifetime parameter: `Ok(None)` if there is none, an
/// error naming `derive` if there are two or more, or any type or const
/// parameter, bound or where clause.
pub(crate) fn at_most_one_lifetime(
    generics: &Generics,
    derive: &str,
) -> syn::Result<Option<Lifetime>> {
    let mut found: Option<Lifetime> = None;
    for param in &generics.params {
        match param {
            GenericParam::Lifetime(def) => {
                if found.is_some() {
                    return Err(syn::Error::new_spanned(
                        &def.lifetime,
                        format!(
                            "#[derive({derive})] takes one lifetime parameter, the borrow of \
                             what it hands out; this is a second one"
                        ),
                    ));
                }
                if !def.bounds.is_empty() {
                    return Err(syn::Error::new_spanned(
                        def,
                        format!("#[derive({derive})] takes a lifetime parameter without bounds"),
                    ));
                }
                found = Some(def.lifetime.clone());
            }
            GenericParam::Type(_) | GenericParam::Const(_) => {
                return Err(syn::Error::new_spanned(
                    param,
                    format!(
                        "#[derive({derive})] takes no type or const parameters: write the \
                         field types out in full"
                    ),
                ));
            }
        }
    }
    if let Some(clause) = &generics.where_clause {
        return Err(syn::Error::new_spanned(
            clause,
            format!("#[derive({derive})] takes no where clause"),
        ));
    }
    Ok(found)
}

/// `ty` with every use of lifetime `from` replaced by `to`: a field type
/// `Query<'w, &'static Hp>` of a struct over `'w` as `Query<'static,
/// &'static Hp>`, the type whose traits the derive delegates to. The walk
/// is over tokens, so it reaches lifetimes inside any type syntax
/// (generic arguments, references, tuples, arrays, paths).
pub(crate) fn replace_lifetime(ty: &syn::Type, from: &Lifetime, to: &str) -> syn::Type {
    let tokens = replace_in(ty.to_token_stream(), &from.ident, to);
    syn::parse2(tokens).expect("replacing a lifetime keeps a type a type")
}

fn replace_in(tokens: TokenStream, from: &proc_macro2::Ident, to: &str) -> TokenStream {
    let mut out = TokenStream::new();
    let mut iter = tokens.into_iter().peekable();
    while let Some(tree) = iter.next() {
        match tree {
            TokenTree::Punct(p) if p.as_char() == '\'' && p.spacing() == Spacing::Joint => {
                if let Some(TokenTree::Ident(name)) = iter.peek() {
                    if name == from {
                        let span = name.span();
                        iter.next();
                        Lifetime::new(to, span).to_tokens(&mut out);
                        continue;
                    }
                }
                out.extend([TokenTree::Punct(p)]);
            }
            TokenTree::Group(g) => {
                let mut group = Group::new(g.delimiter(), replace_in(g.stream(), from, to));
                group.set_span(g.span());
                out.extend([TokenTree::Group(group)]);
            }
            other => out.extend([other]),
        }
    }
    out
}

/// The tuple of `items` (types, patterns or expressions alike): flat up to
/// ten, the widest tuple doecs implements query data for; wider, the first
/// nine and then the tuple of the rest, so any number of fields fits.
pub(crate) fn nest(items: &[TokenStream]) -> TokenStream {
    if items.len() <= 10 {
        quote! { (#(#items,)*) }
    } else {
        let (head, rest) = items.split_at(9);
        let rest = nest(rest);
        quote! { (#(#head,)* #rest,) }
    }
}

/// Identifiers `prefix0`, `prefix1`, .. for `n` generated bindings.
pub(crate) fn idents(prefix: &str, n: usize) -> Vec<proc_macro2::Ident> {
    (0..n)
        .map(|i| proc_macro2::Ident::new(&format!("{prefix}{i}"), Span::call_site()))
        .collect()
}

/// The doc attributes of `attrs`, to carry onto generated items.
pub(crate) fn docs(attrs: &[syn::Attribute]) -> Vec<&syn::Attribute> {
    attrs.iter().filter(|a| a.path().is_ident("doc")).collect()
}
