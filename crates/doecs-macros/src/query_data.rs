//! `#[derive(QueryData)]`: a struct or enum over one lifetime that is both
//! a query and its item, as hecs's `#[derive(Query)]`.
//!
//! For `struct Unit<'a> { id: Entity, hp: &'a mut Hp }` it implements
//! `QueryData for Unit<'a>` by delegating to the tuple of the field types
//! with `'a` replaced by `'static` (`(Entity, &'static mut Hp)`): the same
//! access, matching, state and slices, with `Item<'w> = Unit<'w>` built
//! from the tuple's item. It also generates the read-only twin
//! `UnitReadOnly<'a>` (same visibility; each field the read-only item of
//! its type, `&'a Hp` for `&'a mut Hp`), itself query data over the same
//! state, which `Query::iter` hands out. `ReadOnlyQueryData` and
//! `EveryRowData` hold for `Unit` when they hold for every field.
//!
//! An enum's variants are tuple, named or unit variants of query data; an
//! archetype matches when any variant does, and an entity's item is the
//! first variant that has one for it (for plain data, the first variant
//! matching its archetype). Its state holds one `Option` per variant.
//! Each variant is checked for aliasing on its own, since one item is one
//! variant: `A(&'a mut Hp)` beside `B(&'a Hp, &'a Team)` is accepted.

use crate::util::{at_most_one_lifetime, docs, idents, nest, replace_lifetime};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Lifetime};

/// The expansion of `#[derive(QueryData)]` on `input`.
pub(crate) fn derive(input: &DeriveInput) -> syn::Result<TokenStream> {
    let Some(lt) = at_most_one_lifetime(&input.generics, "QueryData")? else {
        return Err(syn::Error::new_spanned(
            &input.ident,
            "#[derive(QueryData)] needs one lifetime parameter, the borrow its items hold: \
             `struct Unit<'a> { hp: &'a mut Hp, team: &'a Team }`",
        ));
    };
    let names = Names {
        name: input.ident.clone(),
        twin: format_ident!("{}ReadOnly", input.ident),
        lt,
    };
    match &input.data {
        Data::Struct(data) => Ok(derive_struct(input, &names, &data.fields)),
        Data::Enum(data) if data.variants.is_empty() => Err(syn::Error::new_spanned(
            &input.ident,
            "#[derive(QueryData)] on an enum needs at least one variant",
        )),
        Data::Enum(data) => Ok(derive_enum(input, &names, data)),
        Data::Union(_) => Err(syn::Error::new_spanned(
            &input.ident,
            "#[derive(QueryData)] needs a struct or an enum, not a union",
        )),
    }
}

/// The derived type, its read-only twin and their lifetime.
struct Names {
    name: syn::Ident,
    twin: syn::Ident,
    lt: Lifetime,
}

/// One struct's (or variant's) fields: their `'static` types, and how to
/// declare the twin's fields and build a value from bindings.
struct Shape<'f> {
    fields: &'f Fields,
    /// Each field's type with the lifetime replaced by `'static`.
    types: Vec<syn::Type>,
}

impl<'f> Shape<'f> {
    fn new(fields: &'f Fields, lt: &Lifetime) -> Self {
        let types = fields
            .iter()
            .map(|f| replace_lifetime(&f.ty, lt, "'static"))
            .collect();
        Shape { fields, types }
    }

    /// The tuple of the field types: what the struct (or variant)
    /// delegates to.
    fn data(&self) -> TokenStream {
        nest(&self.types.iter().map(|t| quote! { #t }).collect::<Vec<_>>())
    }

    /// The tuple of the fields' read-only forms: the twin's data.
    fn read_only_data(&self) -> TokenStream {
        let types: Vec<TokenStream> = self
            .types
            .iter()
            .map(|t| quote! { <#t as ::doecs::QueryData>::ReadOnly })
            .collect();
        nest(&types)
    }

    /// The pattern that takes the data's item apart into `__f0`, ...
    fn pattern(&self) -> TokenStream {
        let vars = idents("__f", self.types.len());
        nest(&vars.iter().map(|v| quote! { #v }).collect::<Vec<_>>())
    }

    /// `path { a: __f0, .. }`, `path(__f0, ..)` or `path`. Each binding
    /// carries its field type's span, so a field whose type does not fit
    /// its item (a borrow longer than the struct's) is the one named.
    fn build(&self, path: &TokenStream) -> TokenStream {
        let vars: Vec<proc_macro2::Ident> = self
            .fields
            .iter()
            .enumerate()
            .map(|(i, f)| proc_macro2::Ident::new(&format!("__f{i}"), f.ty.span()))
            .collect();
        match self.fields {
            Fields::Named(named) => {
                let names = named.named.iter().map(|f| &f.ident);
                quote! { #path { #(#names: #vars),* } }
            }
            Fields::Unnamed(_) => quote! { #path(#(#vars),*) },
            Fields::Unit => quote! { #path },
        }
    }

    /// The twin's fields: each the read-only item of the field's type.
    /// `vis` is whether to copy the fields' visibility (not in a variant).
    fn twin_fields(&self, lt: &Lifetime, vis: bool) -> TokenStream {
        let fields = self.fields.iter().zip(&self.types).map(|(f, t)| {
            let docs = docs(&f.attrs);
            let v = if vis { Some(&f.vis) } else { None };
            let name = f.ident.as_ref().map(|n| quote! { #n: });
            quote! {
                #(#docs)*
                #v #name <<#t as ::doecs::QueryData>::ReadOnly as ::doecs::QueryData>::Item<#lt>
            }
        });
        match self.fields {
            Fields::Named(_) => quote! { { #(#fields,)* } },
            Fields::Unnamed(_) => quote! { ( #(#fields,)* ) },
            Fields::Unit => quote! {},
        }
    }

    /// `FieldOf<'a, T>: bound` for each field type.
    fn bounds(&self, lt: &Lifetime, bound: &str, read_only: bool) -> Vec<TokenStream> {
        let bound = format_ident!("{}", bound);
        self.types
            .iter()
            .map(|t| {
                let t = if read_only {
                    quote! { <#t as ::doecs::QueryData>::ReadOnly }
                } else {
                    quote! { #t }
                };
                quote! { ::doecs::__private::FieldOf<#lt, #t>: ::doecs::__private::#bound }
            })
            .collect()
    }
}

/// The generated lifetime of items and slices in the impls.
fn item_lt() -> Lifetime {
    Lifetime::new("'__w", Span::call_site())
}

/// The traits `#[query_data(derive(..))]` asks the twin to derive.
fn twin_derives(input: &DeriveInput) -> syn::Result<Vec<syn::Path>> {
    let mut derives = Vec::new();
    for attr in &input.attrs {
        if !attr.path().is_ident("query_data") {
            continue;
        }
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("derive") {
                meta.parse_nested_meta(|inner| {
                    derives.push(inner.path);
                    Ok(())
                })
            } else {
                Err(meta.error("write `#[query_data(derive(Debug, ..))]`: the traits the read-only twin derives"))
            }
        })?;
    }
    Ok(derives)
}

/// The twin's declaration: same visibility, a doc line, the derives asked
/// for, its fields.
fn twin_decl(input: &DeriveInput, names: &Names, body: TokenStream, is_enum: bool) -> TokenStream {
    let Names { name, twin, lt } = names;
    let derives = match twin_derives(input) {
        Ok(derives) => derives,
        Err(e) => return e.to_compile_error(),
    };
    let vis = &input.vis;
    let doc = format!(
        "The read-only form of [`{name}`] (generated by `#[derive(QueryData)]`): what a \
         query of it hands out through `&self` (`Query::iter`, `Query::get`)."
    );
    let (keyword, semi) = match (is_enum, &input.data) {
        (true, _) => (quote! { enum }, quote! {}),
        (false, Data::Struct(s)) if !matches!(s.fields, Fields::Named(_)) => {
            (quote! { struct }, quote! { ; })
        }
        _ => (quote! { struct }, quote! {}),
    };
    quote! {
        #[doc = #doc]
        #[allow(dead_code)]
        #[derive(#(#derives),*)]
        #vis #keyword #twin<#lt> #body #semi
    }
}

fn derive_struct(input: &DeriveInput, names: &Names, fields: &Fields) -> TokenStream {
    let Names { name, twin, lt } = names;
    let shape = Shape::new(fields, lt);
    let data = shape.data();
    let state = quote! { <#data as ::doecs::QueryData>::State };
    let pattern = shape.pattern();
    let main = struct_impl(&StructImpl {
        ty: name,
        lt,
        data: &data,
        state: &state,
        read_only: &quote! { #twin<'static> },
        pattern: &pattern,
        build: &shape.build(&quote! { #name }),
    });
    let twin_impl = struct_impl(&StructImpl {
        ty: twin,
        lt,
        data: &shape.read_only_data(),
        state: &state,
        read_only: &quote! { Self },
        pattern: &pattern,
        build: &shape.build(&quote! { #twin }),
    });
    let decl = twin_decl(input, names, shape.twin_fields(lt, true), false);
    let read_only = shape.bounds(lt, "ReadOnlyField", false);
    let every_row = shape.bounds(lt, "EveryRowField", false);
    let twin_every_row = shape.bounds(lt, "EveryRowField", true);
    quote! {
        #decl
        #main
        #twin_impl
        // SAFETY: every field only reads (the bounds), so the tuple the
        // struct delegates to records no writes and hands out nothing
        // mutable.
        unsafe impl<#lt> ::doecs::ReadOnlyQueryData for #name<#lt> where #(#read_only,)* {}
        // SAFETY: every field is its data's read-only form.
        unsafe impl<#lt> ::doecs::ReadOnlyQueryData for #twin<#lt> {}
        impl<#lt> ::doecs::EveryRowData for #name<#lt> where #(#every_row,)* {}
        impl<#lt> ::doecs::EveryRowData for #twin<#lt> where #(#twin_every_row,)* {}
    }
}

/// What one struct-like `QueryData` impl delegates to.
struct StructImpl<'a> {
    ty: &'a syn::Ident,
    lt: &'a Lifetime,
    /// The tuple type it delegates to.
    data: &'a TokenStream,
    state: &'a TokenStream,
    read_only: &'a TokenStream,
    /// Takes the tuple's item apart.
    pattern: &'a TokenStream,
    /// Builds the struct from the pattern's bindings.
    build: &'a TokenStream,
}

fn struct_impl(s: &StructImpl<'_>) -> TokenStream {
    let StructImpl {
        ty,
        lt,
        data,
        state,
        read_only,
        pattern,
        build,
    } = s;
    let w = item_lt();
    let q = quote! { ::doecs::QueryData };
    let d = quote! { <#data as #q> };
    quote! {
        // SAFETY: every method is the field tuple's (generated by
        // #[derive(QueryData)]), which upholds the contract; the items are
        // the tuple's, moved into the struct's fields.
        #[allow(unused_variables, clippy::unused_unit)]
        unsafe impl<#lt> #q for #ty<#lt> {
            type Item<#w> = #ty<#w>;
            type Slice<#w> = #d::Slice<#w>;
            type Fetch = #d::Fetch;
            type State = #state;
            type Key = #ty<'static>;
            type Env<#w> = #d::Env<#w>;
            type ReadOnly = #read_only;
            const EVERY_ROW: bool = #d::EVERY_ROW;
            const TRACKS: bool = #d::TRACKS;
            const READS_RELATED: bool = #d::READS_RELATED;

            fn access(access: &mut ::doecs::Access) -> ::core::result::Result<(), ::doecs::AliasError> {
                #d::access(access)
            }
            fn required(with: &mut ::std::vec::Vec<::core::any::TypeId>) {
                #d::required(with)
            }
            fn tracked(out: &mut ::std::vec::Vec<::core::any::TypeId>) {
                #d::tracked(out)
            }
            fn named(out: &mut ::std::vec::Vec<::core::any::TypeId>) {
                #d::named(out)
            }
            fn match_archetype(
                archetype: &::doecs::raw::Archetype,
                components: &::doecs::Components,
            ) -> ::core::option::Option<Self::State> {
                #d::match_archetype(archetype, components)
            }
            #[inline(always)]
            fn env(world: &::doecs::WorldCore, window: ::doecs::ChangeWindow) -> Self::Env<'_> {
                #d::env(world, window)
            }
            #[inline]
            unsafe fn fetch(archetype: &::doecs::raw::Archetype, state: Self::State) -> Self::Fetch {
                // SAFETY: forwarded contract.
                unsafe { #d::fetch(archetype, state) }
            }
            #[inline]
            unsafe fn item<#w>(env: &mut Self::Env<#w>, fetch: Self::Fetch, row: usize) -> Self::Item<#w> {
                // SAFETY: forwarded contract. The item's type is written out
                // at `'w`: the call alone leaves its lifetime free (an
                // `Env` of `()` does not tie it), and a field that claims a
                // longer borrow than the struct's must not compile.
                let #pattern: #d::Item<#w> = unsafe { #d::item(env, fetch, row) };
                #build
            }
            #[inline]
            unsafe fn try_item<#w>(
                env: &mut Self::Env<#w>,
                fetch: Self::Fetch,
                row: usize,
            ) -> ::core::option::Option<Self::Item<#w>> {
                // SAFETY: forwarded contract; the type pins the lifetime, as
                // in `item`.
                let #pattern: #d::Item<#w> = unsafe { #d::try_item(env, fetch, row) }?;
                ::core::option::Option::Some(#build)
            }
            #[inline]
            unsafe fn row_matches(env: &mut Self::Env<'_>, fetch: Self::Fetch, row: usize) -> bool {
                // SAFETY: forwarded contract.
                unsafe { #d::row_matches(env, fetch, row) }
            }
            #[inline]
            unsafe fn slice<#w>(
                env: &mut Self::Env<#w>,
                fetch: Self::Fetch,
                start: usize,
                len: usize,
            ) -> Self::Slice<#w> {
                // SAFETY: forwarded contract.
                unsafe { #d::slice(env, fetch, start, len) }
            }
            #[inline(always)]
            unsafe fn for_each_row<#w>(
                env: &mut Self::Env<#w>,
                fetch: Self::Fetch,
                len: usize,
                mut f: impl FnMut(Self::Item<#w>),
            ) {
                // SAFETY: forwarded contract: the tuple hands out each
                // row's item once, in order, and each becomes one struct.
                // The closure's argument type pins the lifetime, as in `item`.
                unsafe { #d::for_each_row(env, fetch, len, |#pattern: #d::Item<#w>| f(#build)) }
            }
            #[inline(always)]
            fn written_ticks(fetch: Self::Fetch, out: &mut impl FnMut(::doecs::raw::TickPtrs)) {
                #d::written_ticks(fetch, out)
            }
        }
    }
}

fn derive_enum(input: &DeriveInput, names: &Names, data: &syn::DataEnum) -> TokenStream {
    let Names { name, twin, lt } = names;
    let shapes: Vec<(&syn::Variant, Shape)> = data
        .variants
        .iter()
        .map(|v| (v, Shape::new(&v.fields, lt)))
        .collect();
    let datas: Vec<TokenStream> = shapes.iter().map(|(_, s)| s.data()).collect();
    let read_only_datas: Vec<TokenStream> =
        shapes.iter().map(|(_, s)| s.read_only_data()).collect();
    let state = {
        let states: Vec<TokenStream> = datas
            .iter()
            .map(|d| quote! { ::core::option::Option<<#d as ::doecs::QueryData>::State> })
            .collect();
        nest(&states)
    };
    let builds = |ty: &syn::Ident| -> Vec<TokenStream> {
        shapes
            .iter()
            .map(|(v, s)| {
                let ident = &v.ident;
                s.build(&quote! { #ty::#ident })
            })
            .collect()
    };
    let patterns: Vec<TokenStream> = shapes.iter().map(|(_, s)| s.pattern()).collect();
    let main = enum_impl(&EnumImpl {
        ty: name,
        lt,
        datas: &datas,
        state: &state,
        read_only: &quote! { #twin<'static> },
        patterns: &patterns,
        builds: &builds(name),
    });
    let twin_impl = enum_impl(&EnumImpl {
        ty: twin,
        lt,
        datas: &read_only_datas,
        state: &state,
        read_only: &quote! { Self },
        patterns: &patterns,
        builds: &builds(twin),
    });
    let variants = shapes.iter().map(|(v, s)| {
        let docs = docs(&v.attrs);
        let ident = &v.ident;
        let fields = s.twin_fields(lt, false);
        quote! { #(#docs)* #ident #fields }
    });
    let decl = twin_decl(input, names, quote! { { #(#variants,)* } }, true);
    let read_only: Vec<TokenStream> = shapes
        .iter()
        .flat_map(|(_, s)| s.bounds(lt, "ReadOnlyField", false))
        .collect();
    let every_row: Vec<TokenStream> = shapes
        .iter()
        .flat_map(|(_, s)| s.bounds(lt, "EveryRowField", false))
        .collect();
    let twin_every_row: Vec<TokenStream> = shapes
        .iter()
        .flat_map(|(_, s)| s.bounds(lt, "EveryRowField", true))
        .collect();
    quote! {
        #decl
        #main
        #twin_impl
        // SAFETY: every variant's every field only reads (the bounds).
        unsafe impl<#lt> ::doecs::ReadOnlyQueryData for #name<#lt> where #(#read_only,)* {}
        // SAFETY: every field is its data's read-only form.
        unsafe impl<#lt> ::doecs::ReadOnlyQueryData for #twin<#lt> {}
        impl<#lt> ::doecs::EveryRowData for #name<#lt> where #(#every_row,)* {}
        impl<#lt> ::doecs::EveryRowData for #twin<#lt> where #(#twin_every_row,)* {}
    }
}

/// What one enum's `QueryData` impl is made of: per variant, the tuple
/// it delegates to, the pattern of its item and the variant built from it.
struct EnumImpl<'a> {
    ty: &'a syn::Ident,
    lt: &'a Lifetime,
    datas: &'a [TokenStream],
    state: &'a TokenStream,
    read_only: &'a TokenStream,
    patterns: &'a [TokenStream],
    builds: &'a [TokenStream],
}

fn enum_impl(e: &EnumImpl<'_>) -> TokenStream {
    let EnumImpl {
        ty,
        lt,
        datas,
        state,
        read_only,
        patterns,
        builds,
    } = e;
    let w = item_lt();
    let q = quote! { ::doecs::QueryData };
    let d: Vec<TokenStream> = datas.iter().map(|x| quote! { <#x as #q> }).collect();
    let n = d.len();
    let (states, fetches, envs, slices) = (
        idents("__s", n),
        idents("__fetch", n),
        idents("__env", n),
        idents("__slice", n),
    );
    let tuple =
        |xs: &[proc_macro2::Ident]| nest(&xs.iter().map(|x| quote! { #x }).collect::<Vec<_>>());
    let (state_pat, fetch_pat, env_pat, slice_tuple) = (
        tuple(&states),
        tuple(&fetches),
        tuple(&envs),
        tuple(&slices),
    );
    let each = |f: &dyn Fn(&TokenStream) -> TokenStream| nest(&d.iter().map(f).collect::<Vec<_>>());
    let slice_ty = each(&|d| quote! { ::core::option::Option<#d::Slice<#w>> });
    let fetch_ty = each(&|d| quote! { ::core::option::Option<#d::Fetch> });
    let env_ty = each(&|d| quote! { #d::Env<#w> });
    let envs_made = each(&|d| quote! { #d::env(world, window) });
    let fetched = nest(
        &d.iter()
            .zip(&states)
            .map(|(d, s)| {
                quote! {
                    // SAFETY: forwarded contract: the state matched.
                    #s.map(|s| unsafe { #d::fetch(archetype, s) })
                }
            })
            .collect::<Vec<_>>(),
    );
    quote! {
        // SAFETY: each variant's data upholds the contract on its own
        // columns; the access is every variant's, each checked for
        // aliasing against what came before (`access_any`); an item is one
        // variant's item, the first present variant with one for the row,
        // so its mutable parts are that variant's alone; a slice is the
        // first present variant's; `try_item` gives `Some` exactly where
        // some present variant's `row_matches` holds, and with `EVERY_ROW`
        // on every row of a matched archetype (generated by
        // #[derive(QueryData)]).
        #[allow(unused_variables, unused_mut, unused_assignments, clippy::unused_unit)]
        unsafe impl<#lt> #q for #ty<#lt> {
            type Item<#w> = #ty<#w>;
            type Slice<#w> = #slice_ty;
            type Fetch = #fetch_ty;
            type State = #state;
            type Key = #ty<'static>;
            type Env<#w> = #env_ty;
            type ReadOnly = #read_only;
            const EVERY_ROW: bool = true #(&& #d::EVERY_ROW)*;
            const TRACKS: bool = false #(|| #d::TRACKS)*;
            const READS_RELATED: bool = false #(|| #d::READS_RELATED)*;

            fn access(access: &mut ::doecs::Access) -> ::core::result::Result<(), ::doecs::AliasError> {
                ::doecs::__private::access_any(access, &[#(#d::access),*])
            }
            fn required(with: &mut ::std::vec::Vec<::core::any::TypeId>) {
                ::doecs::__private::required_all(with, &[#(#d::required),*])
            }
            fn tracked(out: &mut ::std::vec::Vec<::core::any::TypeId>) {
                #(#d::tracked(out);)*
            }
            fn named(out: &mut ::std::vec::Vec<::core::any::TypeId>) {
                #(#d::named(out);)*
            }
            fn match_archetype(
                archetype: &::doecs::raw::Archetype,
                components: &::doecs::Components,
            ) -> ::core::option::Option<Self::State> {
                // Where every variant has an item on every row, an entity's
                // item is the first matching variant's: the later ones are
                // not kept (nor fetched, nor stamped).
                let mut found = false;
                #(
                    let #states = if found && Self::EVERY_ROW {
                        ::core::option::Option::None
                    } else {
                        #d::match_archetype(archetype, components)
                    };
                    found |= #states.is_some();
                )*
                found.then_some(#state_pat)
            }
            #[inline(always)]
            fn env(world: &::doecs::WorldCore, window: ::doecs::ChangeWindow) -> Self::Env<'_> {
                #envs_made
            }
            #[inline]
            unsafe fn fetch(archetype: &::doecs::raw::Archetype, state: Self::State) -> Self::Fetch {
                let #state_pat = state;
                #fetched
            }
            #[inline]
            unsafe fn item<#w>(env: &mut Self::Env<#w>, fetch: Self::Fetch, row: usize) -> Self::Item<#w> {
                // SAFETY: forwarded contract; `item` is asked only for a row
                // that has an item (every row, with `EVERY_ROW`).
                match unsafe { Self::try_item(env, fetch, row) } {
                    ::core::option::Option::Some(item) => item,
                    ::core::option::Option::None => {
                        ::core::unreachable!("doecs: a derived enum query asked for a row without an item")
                    }
                }
            }
            #[inline]
            unsafe fn try_item<#w>(
                env: &mut Self::Env<#w>,
                fetch: Self::Fetch,
                row: usize,
            ) -> ::core::option::Option<Self::Item<#w>> {
                let #env_pat = env;
                let #fetch_pat = fetch;
                #(
                    if let ::core::option::Option::Some(f) = #fetches {
                        // SAFETY: forwarded contract; no other variant's
                        // item was made for this row. The type pins the
                        // item's lifetime to `'w` (the call leaves it free).
                        let item: ::core::option::Option<#d::Item<#w>> =
                            unsafe { #d::try_item(#envs, f, row) };
                        if let ::core::option::Option::Some(#patterns) = item {
                            return ::core::option::Option::Some(#builds);
                        }
                    }
                )*
                ::core::option::Option::None
            }
            #[inline]
            unsafe fn row_matches(env: &mut Self::Env<'_>, fetch: Self::Fetch, row: usize) -> bool {
                let #env_pat = env;
                let #fetch_pat = fetch;
                // SAFETY: forwarded contract.
                false #(|| #fetches.is_some_and(|f| unsafe { #d::row_matches(#envs, f, row) }))*
            }
            #[inline]
            unsafe fn slice<#w>(
                env: &mut Self::Env<#w>,
                fetch: Self::Fetch,
                start: usize,
                len: usize,
            ) -> Self::Slice<#w> {
                let #env_pat = env;
                let #fetch_pat = fetch;
                let mut taken = false;
                #(
                    let #slices = match #fetches {
                        ::core::option::Option::Some(f) if !taken => {
                            taken = true;
                            // SAFETY: forwarded contract; only the first
                            // present variant's slices are made.
                            ::core::option::Option::Some(unsafe { #d::slice(#envs, f, start, len) })
                        }
                        _ => ::core::option::Option::None,
                    };
                )*
                #slice_tuple
            }
            #[inline(always)]
            fn written_ticks(fetch: Self::Fetch, out: &mut impl FnMut(::doecs::raw::TickPtrs)) {
                let #fetch_pat = fetch;
                #(
                    if let ::core::option::Option::Some(f) = #fetches {
                        #d::written_ticks(f, out);
                    }
                )*
            }
        }
    }
}
