//! Derive macros for doecs.
//!
//! `#[derive(Bundle)]` makes a struct a bundle: its fields are the
//! components, spawned, inserted and removed together like a tuple's.
//!
//! ```ignore
//! #[derive(doecs::Bundle)]
//! struct Ship {
//!     position: Position,
//!     velocity: Velocity,
//! }
//! let e = world.spawn(Ship { position, velocity });
//! let ship: Ship = world.remove::<Ship>(e)?;
//! ```
//!
//! Each field's type must be a distinct component type (a bundle naming one
//! type twice is refused when it is first used), or a bundle marked
//! `#[bundle]`, whose fields are flattened into this one's. A field that is
//! a bundle but unmarked does not compile (it would otherwise be stored as
//! one component, silently). Named-field and tuple structs are supported;
//! generic structs get a `Component` (or `Bundle`) bound on every field
//! type, and skip the unmarked-bundle check.
//!
//! `#[derive(SystemParam)]` makes a struct of system parameters one
//! parameter (see [`derive_system_param`]); `#[derive(QueryData)]` makes a
//! struct or enum of query data a query that is its own item (see
//! [`derive_query_data`]). `#[derive(SystemSet)]` makes a type a system
//! set.

mod query_data;
mod system_param;
mod util;

use proc_macro::TokenStream;
use quote::quote;
use syn::{parse_macro_input, Data, DeriveInput, Fields};

/// Implements `doecs::SystemSet` for a type (it must also be `Clone`,
/// `Eq`, `Hash` and `Debug`): `#[derive(SystemSet, Clone, Debug,
/// PartialEq, Eq, Hash)] struct Physics;`.
#[proc_macro_derive(SystemSet)]
pub fn derive_system_set(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    let name = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    quote! {
        impl #impl_generics ::doecs::SystemSet for #name #ty_generics #where_clause {}
    }
    .into()
}

/// Implements `doecs::SystemParam` for a struct whose named fields are
/// system parameters, with at most one lifetime parameter:
///
/// ```ignore
/// #[derive(SystemParam)]
/// struct Combat<'w> {
///     units: Query<'w, (&'static mut Hp, &'static Team)>,
///     score: ResMut<'w, Score>,
///     commands: Commands<'w>,
///     ticks: Local<'w, u32>,
/// }
/// fn system(mut combat: Combat) { /* combat.units.for_each(..) */ }
/// ```
///
/// The struct's state is its fields' states, its access theirs: two
/// fields that would alias (`Query<&mut Hp>` beside `Query<&Hp>`) make the
/// system be refused when added, naming both fields, as two such function
/// parameters would. Query data inside a field may borrow for `'static`
/// (`&'static mut Hp`, as in bevy) or for the struct's lifetime. A field
/// may itself be a derived parameter, or a `ParamSet`.
/// Enums, tuple structs and type or const parameters are refused.
#[proc_macro_derive(SystemParam)]
pub fn derive_system_param(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match system_param::derive(&input) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Implements `doecs::QueryData` for a struct or enum over one lifetime
/// whose fields are query data that is its own item (`&'a T`, `&'a mut T`,
/// `Option` of these, `Entity`, `Ref<'a, T>`, `Mut<'a, T>`, another
/// derived query), so the type is both the query and its item, as hecs's
/// `#[derive(Query)]`:
///
/// ```ignore
/// #[derive(QueryData)]
/// struct Unit<'a> {
///     id: Entity,
///     hp: &'a mut Hp,
///     team: &'a Team,
///     armor: Option<&'a Armor>,
/// }
/// for unit in world.query_mut::<Unit>().iter_mut() {
///     unit.hp.0 -= 1;
/// }
/// ```
///
/// It also generates `UnitReadOnly<'a>`, the read-only twin (same
/// visibility, each field's read-only item: `&'a Hp` for `&'a mut Hp`),
/// which `Query::iter` and `Query::get` hand out;
/// `#[query_data(derive(Debug, PartialEq))]` has it derive those traits.
/// The derived query is `ReadOnlyQueryData` (usable with `world.query`)
/// when every field is.
///
/// An enum's variants (tuple, named or unit) are alternatives: an entity
/// matches when any variant does, and its item is the first variant that
/// matches it. A unit variant matches every entity. Each variant is
/// checked for aliasing on its own.
///
/// Named, tuple and unit structs are supported; a type without exactly
/// one lifetime parameter, or with type or const parameters, is refused.
#[proc_macro_derive(QueryData, attributes(query_data))]
pub fn derive_query_data(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match query_data::derive(&input) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Implements `doecs::Bundle` for a struct whose fields are components,
/// or bundles marked `#[bundle]`, which are flattened into it.
#[proc_macro_derive(Bundle, attributes(bundle))]
pub fn derive_bundle(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match bundle(&input) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Whether a field is marked `#[bundle]` (a nested bundle to flatten).
fn is_nested(field: &syn::Field) -> syn::Result<bool> {
    let mut nested = false;
    for attr in &field.attrs {
        if attr.path().is_ident("bundle") {
            if !matches!(attr.meta, syn::Meta::Path(_)) {
                return Err(syn::Error::new_spanned(
                    attr,
                    "write `#[bundle]` alone: it marks a field that is itself a bundle",
                ));
            }
            nested = true;
        }
    }
    Ok(nested)
}

fn bundle(input: &DeriveInput) -> syn::Result<proc_macro2::TokenStream> {
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new_spanned(
            &input.ident,
            "#[derive(Bundle)] needs a struct whose fields are components",
        ));
    };
    let name = &input.ident;
    let fields: Vec<&syn::Field> = data.fields.iter().collect();
    let nested: Vec<bool> = fields
        .iter()
        .map(|f| is_nested(f))
        .collect::<syn::Result<_>>()?;
    let vars: Vec<proc_macro2::Ident> = (0..fields.len())
        .map(|i| quote::format_ident!("field_{}", i))
        .collect();
    // How to take the struct apart and build it again, for either kind.
    let (destructure, construct) = match &data.fields {
        Fields::Named(named) => {
            let names: Vec<&syn::Ident> = named
                .named
                .iter()
                .map(|f| f.ident.as_ref().expect("named fields"))
                .collect();
            (
                quote! { #name { #(#names: #vars),* } },
                quote! { #name { #(#names: #vars),* } },
            )
        }
        Fields::Unnamed(_) => (
            quote! { #name ( #(#vars),* ) },
            quote! { #name ( #(#vars),* ) },
        ),
        Fields::Unit => (quote! { #name }, quote! { #name }),
    };
    let mut generics = input.generics.clone();
    {
        let clause = generics.make_where_clause();
        for (field, &is_bundle) in fields.iter().zip(&nested) {
            let ty = &field.ty;
            clause.predicates.push(if is_bundle {
                syn::parse_quote!(#ty: ::doecs::Bundle)
            } else {
                syn::parse_quote!(#ty: ::doecs::Component)
            });
        }
        clause
            .predicates
            .push(syn::parse_quote!(Self: ::core::marker::Send + ::core::marker::Sync + 'static));
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    // Per field: how many columns it is, and each method's step for it.
    let mut count = Vec::new();
    let mut field_types = Vec::new();
    let mut component_ids = Vec::new();
    let mut registered_ids = Vec::new();
    let mut write_row = Vec::new();
    let mut read_row = Vec::new();
    let mut into_fields = Vec::new();
    let mut checks = Vec::new();
    for ((field, &is_bundle), var) in fields.iter().zip(&nested).zip(&vars) {
        let ty = &field.ty;
        if is_bundle {
            count.push(quote! { <#ty as ::doecs::Bundle>::FIELD_COUNT });
            field_types.push(quote! { <#ty as ::doecs::Bundle>::field_types(out); });
            component_ids
                .push(quote! { <#ty as ::doecs::Bundle>::component_ids(components, out); });
            registered_ids.push(quote! {
                if !<#ty as ::doecs::Bundle>::registered_ids(components, out) {
                    return false;
                }
            });
            write_row.push(quote! {
                let n = <#ty as ::doecs::Bundle>::FIELD_COUNT;
                // SAFETY: the nested bundle's columns are the next `n`
                // bases, in its field order (forwarded contract).
                unsafe { <#ty as ::doecs::Bundle>::write_row(#var, &field_bases[at..at + n], row) };
                at += n;
            });
            read_row.push(quote! {
                let n = <#ty as ::doecs::Bundle>::FIELD_COUNT;
                // SAFETY: as in `write_row`.
                let #var = unsafe { <#ty as ::doecs::Bundle>::read_row(&field_bases[at..at + n], row) };
                at += n;
            });
            into_fields.push(quote! { <#ty as ::doecs::Bundle>::into_fields(#var, sink); });
        } else {
            count.push(quote! { 1 });
            field_types.push(quote! {
                out.push((::core::any::TypeId::of::<#ty>(), ::core::any::type_name::<#ty>()));
            });
            component_ids.push(quote! { out.push(components.register::<#ty>()); });
            registered_ids.push(quote! {
                match components.id_of::<#ty>() {
                    ::core::option::Option::Some(id) => out.push(id),
                    ::core::option::Option::None => return false,
                }
            });
            write_row.push(quote! {
                // SAFETY: the caller guarantees this base is a column of
                // the field's type, with a writable slot at `row`.
                unsafe { field_bases[at].cast::<#ty>().add(row).write(#var) };
                at += 1;
            });
            read_row.push(quote! {
                // SAFETY: the caller guarantees this slot holds an
                // initialised value of the field's type, which it gives up.
                let #var = unsafe { field_bases[at].cast::<#ty>().add(row).read() };
                at += 1;
            });
            into_fields.push(quote! { sink.field(#var); });
            // A field that is itself a bundle, unmarked, would be stored as
            // one component: refused when the bundle is compiled.
            checks.push(quote::quote_spanned! {syn::spanned::Spanned::span(ty)=>
                const _: () = {
                    #[allow(unused_imports)]
                    use ::doecs::__private::NotBundle as _;
                    ::core::assert!(
                        !::doecs::__private::IsBundle::<#ty>::IS_BUNDLE,
                        "a field of a #[derive(Bundle)] struct is itself a bundle: \
                         mark it #[bundle] to flatten it, or wrap it in a newtype \
                         to store it as one component"
                    );
                };
            });
        }
    }
    let checks = if input.generics.params.is_empty() {
        quote! { #(#checks)* }
    } else {
        // Generic field types are only known at use; the check needs them.
        quote! {}
    };
    Ok(quote! {
        #checks

        // SAFETY: the ids, types, writes and reads all follow field order
        // (a nested bundle's fields in its own order, in its place), each
        // at its own type (generated by #[derive(Bundle)]).
        unsafe impl #impl_generics ::doecs::Bundle for #name #ty_generics #where_clause {
            const FIELD_COUNT: usize = 0 #(+ #count)*;

            fn field_types(out: &mut ::std::vec::Vec<(::core::any::TypeId, &'static str)>) {
                #(#field_types)*
            }

            fn component_ids(
                components: &mut ::doecs::Components,
                out: &mut ::std::vec::Vec<::doecs::ComponentId>,
            ) {
                #(#component_ids)*
            }

            fn registered_ids(
                components: &::doecs::Components,
                out: &mut ::std::vec::Vec<::doecs::ComponentId>,
            ) -> bool {
                #(#registered_ids)*
                true
            }

            #[inline]
            #[allow(unused_assignments, unused_variables)]
            unsafe fn write_row(self, field_bases: &[*mut u8], row: usize) {
                let #destructure = self;
                let mut at = 0usize;
                #(#write_row)*
            }

            #[inline]
            #[allow(unused_assignments, unused_variables)]
            unsafe fn read_row(field_bases: &[*mut u8], row: usize) -> Self {
                let mut at = 0usize;
                #(#read_row)*
                #construct
            }

            #[allow(unused_variables)]
            fn into_fields(self, sink: &mut impl ::doecs::FieldSink) {
                let #destructure = self;
                #(#into_fields)*
            }
        }
    })
}
